package trust_test

import (
	"fmt"

	"github.com/switchboard-mcp/switchboard/trust"
)

func ExampleBaseEnv() {
	fmt.Println(trust.BaseEnv())
	// Output:
	// [PATH HOME USER LOGNAME LANG LC_* TERM TMPDIR SHELL TZ]
}

func ExampleFields() {
	fmt.Println(trust.Fields())
	// Output:
	// [type command args env cwd url headers headersHelper env_passthrough sandbox]
}
