package cli

import (
	"path/filepath"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// allowPrivateNetworkForProjectServers counts from managed, --settings,
// user and local settings, never from the repository's settings.
func TestAllowPrivateNetworkSources(t *testing.T) {
	on := map[string]any{config.AllowPrivateNetworkKey: true}
	tests := []struct {
		name  string
		setup func(w *rtWorld, f *Factory)
		want  bool
	}{
		{"nothing", func(*rtWorld, *Factory) {}, false},
		{"user", func(w *rtWorld, _ *Factory) { w.writeJSON(filepath.Join(w.sb, "settings.json"), on) }, true},
		{"local", func(w *rtWorld, _ *Factory) {
			w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"projects": map[string]any{w.proj: on}})
		}, true},
		{"local for another workspace", func(w *rtWorld, _ *Factory) {
			w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"projects": map[string]any{w.work: on}})
		}, false},
		{"managed", func(w *rtWorld, _ *Factory) {
			w.writeJSON(filepath.Join(w.work, "managed", "managed-settings.json"), on)
		}, true},
		{"--settings", func(_ *rtWorld, f *Factory) { f.Global.Settings = `{"allowPrivateNetworkForProjectServers": true}` }, true},
		{"the repository's settings", func(w *rtWorld, _ *Factory) {
			w.writeJSON(filepath.Join(w.proj, ".switchboard", "settings.json"), on)
		}, false},
		{"false in user settings", func(w *rtWorld, _ *Factory) {
			w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{config.AllowPrivateNetworkKey: false})
		}, false},
		{"a string is not true", func(w *rtWorld, _ *Factory) {
			w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{config.AllowPrivateNetworkKey: "true"})
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newRTWorld(t)
			f, _, _, _ := w.factory(false)
			tt.setup(w, f)
			if got := f.allowPrivateNetwork(w.proj); got != tt.want {
				t.Errorf("allowPrivateNetwork = %v, want %v", got, tt.want)
			}
		})
	}
}
