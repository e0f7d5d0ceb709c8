package lazyre_test

import (
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/lazyre"
)

// The expression is compiled once, on the first call, whoever calls.
func TestNew(t *testing.T) {
	re := lazyre.New(`^a+b$`)
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Go(func() { got[i] = re() })
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] {
			t.Fatal("two calls gave two compiled expressions")
		}
	}
	if !re().MatchString("aab") || re().MatchString("ba") {
		t.Error("the expression does not match as written")
	}
}

// A bad expression panics at its first use, not at New.
func TestNewBadExpression(t *testing.T) {
	re := lazyre.New(`(`)
	defer func() {
		if recover() == nil {
			t.Error("a bad expression did not panic at its first use")
		}
	}()
	re()
}
