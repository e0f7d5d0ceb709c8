package netguard_test

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/netguard"
)

func Example() {
	project := netguard.Policy{Hint: "private addresses need the user's permission"}
	for _, u := range []string{
		"https://api.example.com/mcp",
		"http://0xa9fea9fe/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/",
		"http://127.0.0.1:8080/mcp",
		"file:///etc/passwd",
	} {
		fmt.Println(u, "→", project.CheckURL(u))
	}
	// A server the user wrote may reach loopback; metadata stays refused.
	fmt.Println(netguard.CheckURL("http://127.0.0.1:8080/mcp"))
	fmt.Println(netguard.CheckURL("http://metadata.google.internal/"))
	// Output:
	// https://api.example.com/mcp → <nil>
	// http://0xa9fea9fe/latest/meta-data/ → refused: 0xa9fea9fe (169.254.169.254) is a cloud metadata address
	// http://[::ffff:169.254.169.254]/ → refused: ::ffff:169.254.169.254 (169.254.169.254) is a cloud metadata address
	// http://127.0.0.1:8080/mcp → refused: 127.0.0.1 is a loopback address; private addresses need the user's permission
	// file:///etc/passwd → refused: file:// URLs are not allowed; remote MCP servers need http:// or https://
	// <nil>
	// refused: metadata.google.internal is a cloud metadata host name
}
