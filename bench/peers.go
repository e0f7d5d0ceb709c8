package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// peer is a program users compare switchboard with: an npm package whose
// CLI lists the configured MCP servers after connecting to each.
type peer struct {
	name    string // for tables
	dir     string // folder under bench/.peers
	pkg     string // npm package@version
	version string // what --version must print
	bin     string // node_modules/.bin name
	// setup writes the servers into the sandbox home for work.
	setup func(home, work string, cfg map[string]stdioServer) error
	args  []string // the list command
	env   []string
	// connected is the text of a line that reports a connected server.
	connected string
	exe       string // set once installed
}

func (b *bench) peerList() []*peer {
	return []*peer{
		{
			name: "Claude Code", dir: "claude", pkg: "@anthropic-ai/claude-code@" + b.claudeVer, version: b.claudeVer, bin: "claude",
			setup: func(home, _ string, cfg map[string]stdioServer) error {
				// User scope: ~/.claude.json.
				return writeJSON(filepath.Join(home, ".claude.json"), map[string]any{"mcpServers": cfg})
			},
			args:      []string{"mcp", "list"},
			env:       []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"},
			connected: "✔ Connected",
		},
		{
			name: "gemini-cli", dir: "gemini", pkg: "@google/gemini-cli@" + b.geminiVer, version: b.geminiVer, bin: "gemini",
			setup: func(home, work string, cfg map[string]stdioServer) error {
				dir := filepath.Join(home, ".gemini")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				// gemini-cli ignores every server in a folder it does not trust.
				if err := writeJSON(filepath.Join(dir, "trustedFolders.json"), map[string]string{work: "TRUST_FOLDER"}); err != nil {
					return err
				}
				return writeJSON(filepath.Join(dir, "settings.json"), map[string]any{"mcpServers": cfg})
			},
			args:      []string{"mcp", "list"},
			connected: "- Connected",
		},
	}
}

// install makes sure p is installed in bench/.peers/<dir> (npm install in a
// scratch folder) and sets p.exe.
func (b *bench) install(p *peer) error {
	dir := filepath.Join(b.peersDir, p.dir)
	exe := filepath.Join(dir, "node_modules", ".bin", p.bin)
	if out, err := exec.Command(exe, "--version").Output(); err == nil && strings.Contains(string(out), p.version) {
		p.exe = exe
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm not found in $PATH: cannot install %s", p.pkg)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true}`+"\n"), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "  installing %s in %s…\n", p.pkg, dir)
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", p.pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install %s: %v\n%s", p.pkg, err, lastLines(string(out), 10))
	}
	out, err := exec.Command(exe, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s installed but `%s --version` fails: %v: %s", p.pkg, p.bin, err, lastLines(string(out), 3))
	}
	p.exe = exe
	return nil
}

// list runs the peer's list command on cfg in a sandbox and returns the run
// and how many servers it reported connected.
func (b *bench) list(p *peer, cfg map[string]stdioServer) (measured, int, error) {
	home, work, err := b.sandbox(p.dir)
	if err != nil {
		return measured{}, 0, err
	}
	if err := p.setup(home, work, cfg); err != nil {
		return measured{}, 0, err
	}
	cmd := exec.Command(p.exe, p.args...)
	cmd.Dir, cmd.Env = work, env(home, p.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	m, err := measure(cmd, 3*time.Minute)
	m.out = out.Bytes()
	if err != nil {
		return m, 0, fmt.Errorf("%s %s: %v\n%s", p.bin, strings.Join(p.args, " "), err, lastLines(out.String(), 5))
	}
	return m, strings.Count(out.String(), p.connected), nil
}

// peers: switchboard status vs the peers' list commands, back to back in
// each round, on the same servers.
func (b *bench) peers() error {
	if _, err := b.switchboard(); err != nil {
		return err
	}
	var ps []*peer
	var skipped []string
	for _, p := range b.peerList() {
		if !slices.Contains(b.peerNames, p.dir) {
			continue
		}
		if err := b.install(p); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s unavailable: %v", p.name, err))
			continue
		}
		ps = append(ps, p)
	}
	fast := servers("fast", 20, b.sbServer("echo"))
	type benchCase struct {
		name    string
		cfg     map[string]stdioServer
		connect int  // servers that must end connected
		floor   bool // also run the bare Go SDK fan-out
		target  string
	}
	cases := []benchCase{
		{"20 fast Go echo servers", fast, 20, true, "switchboard ≤ 0.25× Claude Code"},
		{"10 servers that sleep 1 s before answering", servers("slow", 10, b.slowServer()), 10, true, "switchboard ≤ 1.6 s"},
	}
	if b.hung {
		// No floor here: the bare fan-out has no wait of its own to give up on
		// the hung server after.
		cases = append(cases, benchCase{"20 fast + 1 that never answers initialize",
			merge(fast, servers("hung", 1, b.sbServer("hang-init"))), 20, false, "switchboard ≤ 6.5 s"})
	}
	head := []string{"case", "switchboard s", "bare SDK fan-out s"}
	for _, p := range ps {
		head = append(head, p.name+" s", "switchboard ÷ "+p.name, "bare SDK ÷ "+p.name)
	}
	head = append(head, "CPU ms: switchboard", "bare SDK")
	for _, p := range ps {
		head = append(head, p.name)
	}
	head = append(head, "target")
	tb := &table{
		title: fmt.Sprintf("Against the peers: `switchboard status` and a bare Go SDK fan-out vs `claude mcp list` / `gemini mcp list`, which connect to and health-check every server (medians of %d rounds)", b.rounds),
		head:  head,
	}
	hungLines := map[string]string{}
	for _, c := range cases {
		var sw, scpu, fw, fcpu []float64
		pw := make([][]float64, len(ps))
		prat := make([][]float64, len(ps))
		frat := make([][]float64, len(ps))
		pcpu := make([][]float64, len(ps))
		for r := range b.rounds {
			// Rotate who goes first; switchboard is runner 0, the bare SDK
			// fan-out runner 1, the peers the rest.
			n := len(ps) + 2
			var sm, fm measured
			pm := make([]measured, len(ps))
			for k := range n {
				who := (k + r) % n
				switch who {
				case 0:
					m, got, err := b.status(c.cfg)
					if err != nil {
						return fmt.Errorf("%s: %w", c.name, err)
					}
					if got != c.connect {
						return fmt.Errorf("%s: switchboard connected %d servers, want %d", c.name, got, c.connect)
					}
					sm = m
					continue
				case 1:
					if !c.floor {
						continue
					}
					m, got, err := b.sdkFanout(c.cfg)
					if err != nil {
						return fmt.Errorf("%s: %w", c.name, err)
					}
					if got != c.connect {
						return fmt.Errorf("%s: the bare SDK fan-out connected %d servers, want %d", c.name, got, c.connect)
					}
					fm = m
					continue
				}
				p := ps[who-2]
				m, got, err := b.list(p, c.cfg)
				if err != nil {
					return fmt.Errorf("%s: %w", c.name, err)
				}
				if got != c.connect {
					return fmt.Errorf("%s: %s reported %d connected, want %d:\n%s", c.name, p.name, got, c.connect, lastLines(string(m.out), 25))
				}
				for _, l := range strings.Split(string(m.out), "\n") {
					if strings.Contains(l, "hung00:") {
						hungLines[p.name] = strings.TrimSpace(l)
					}
				}
				pm[who-2] = m
			}
			fwall, fown := math.NaN(), math.NaN()
			if c.floor {
				fwall, fown = secs(fm.wall), cpuMs(fm.own)
			}
			sw, scpu = append(sw, secs(sm.wall)), append(scpu, cpuMs(sm.own))
			fw, fcpu = append(fw, fwall), append(fcpu, fown)
			line := fmt.Sprintf("  round %d  %-42s switchboard %.2f s", r+1, c.name, secs(sm.wall))
			if c.floor {
				line += fmt.Sprintf("  bare SDK %.2f s", fwall)
			}
			for i, p := range ps {
				pw[i] = append(pw[i], secs(pm[i].wall))
				prat[i] = append(prat[i], ratio(secs(sm.wall), secs(pm[i].wall)))
				frat[i] = append(frat[i], ratio(fwall, secs(pm[i].wall)))
				pcpu[i] = append(pcpu[i], cpuMs(pm[i].own))
				line += fmt.Sprintf("  %s %.2f s", p.name, secs(pm[i].wall))
			}
			fmt.Fprintln(os.Stderr, line)
		}
		row := []any{c.name, median(sw), median(fw)}
		for i := range ps {
			row = append(row, median(pw[i]), median(prat[i]), median(frat[i]))
		}
		row = append(row, median(scpu), median(fcpu))
		for i := range ps {
			row = append(row, median(pcpu[i]))
		}
		row = append(row, c.target)
		tb.add(row...)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.pkg)
	}
	tb.note("Peers: %s, installed with npm in bench/.peers/. Each run gets a temp HOME and working directory: Claude Code reads the servers from $HOME/.claude.json (user scope), gemini-cli from $HOME/.gemini/settings.json (the folder marked trusted), switchboard from --mcp-config with --strict-mcp-config.", strings.Join(names, ", "))
	tb.note("CPU is each process's own utime+stime, servers excluded. switchboard status waits at most --wait (5 s) and then shows a slower server as connecting.")
	tb.note("Bare SDK fan-out (floor): this program in a hidden mode that reads the same server file, starts every server at once with mcp.CommandTransport,")
	tb.note("  connects, lists each one's tools, closes them all and exits (no supervisor, no configuration, no policy): what a Go host without supervision")
	tb.note("  reaches on this machine. Its ratio is to the peer's time in the same round; it does not run with the hung server (it has no wait to give up after).")
	for _, p := range ps {
		if l := hungLines[p.name]; l != "" {
			tb.note("%s's line for the hung server: %s", p.name, l)
		}
	}
	for _, s := range skipped {
		tb.note("%s", s)
	}
	tb.print()
	return nil
}
