package main

import "github.com/switchboard-mcp/switchboard/host"

func authOptions(scenario string, cctx map[string]any) (*host.OAuthOptions, error) { return nil, nil }
