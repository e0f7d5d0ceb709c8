// Command linked is what internal/archtest must catch: a program outside
// the test-only list that links internal/testserver. It is in testdata, so
// `go build ./...` never builds it; the archtest tests build and list it on
// purpose, to prove their checks fail when they should.
package main

import "github.com/switchboard-mcp/switchboard/internal/testserver"

func main() { testserver.MaybeRun() }
