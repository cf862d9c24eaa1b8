package config

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func newFlags() (*pflag.FlagSet, *string, *bool) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	addr := fs.String("metrics-bind-address", ":8443", "")
	elect := fs.Bool("leader-elect", false, "")
	return fs, addr, elect
}

func TestApplyPrecedence(t *testing.T) {
	tests := map[string]struct {
		args      []string
		env       map[string]string
		wantAddr  string
		wantElect bool
	}{
		"default when neither is given": {
			wantAddr: ":8443",
		},
		"environment over default": {
			env:       map[string]string{"CAIRN_METRICS_BIND_ADDRESS": ":9000", "CAIRN_LEADER_ELECT": "true"},
			wantAddr:  ":9000",
			wantElect: true,
		},
		"flag over environment": {
			args:     []string{"--metrics-bind-address=:7000"},
			env:      map[string]string{"CAIRN_METRICS_BIND_ADDRESS": ":9000"},
			wantAddr: ":7000",
		},
		"empty variable is unset": {
			env:      map[string]string{"CAIRN_METRICS_BIND_ADDRESS": ""},
			wantAddr: ":8443",
		},
		"variables of flags the command lacks are ignored": {
			env:      map[string]string{"CAIRN_DEV_DIR": "/elsewhere"},
			wantAddr: ":8443",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			fs, addr, elect := newFlags()
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			if err := Apply(fs, lookup); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if *addr != tc.wantAddr || *elect != tc.wantElect {
				t.Errorf("got address %q, leader-elect %v; want %q, %v", *addr, *elect, tc.wantAddr, tc.wantElect)
			}
		})
	}
}

func TestApplyBadValueNamesTheVariable(t *testing.T) {
	fs, _, _ := newFlags()
	err := Apply(fs, func(k string) (string, bool) {
		if k == "CAIRN_LEADER_ELECT" {
			return "maybe", true
		}
		return "", false
	})
	if err == nil || !strings.Contains(err.Error(), `CAIRN_LEADER_ELECT="maybe" for --leader-elect`) {
		t.Fatalf("Apply with a bad boolean: got %v", err)
	}
}

func TestApplyRedactsSensitiveValues(t *testing.T) {
	saved := Vars
	t.Cleanup(func() { Vars = saved })
	Vars = []Var{{Name: "CAIRN_SECRET_COUNT", Flag: "count", Sensitive: true}}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.Int("count", 0, "")
	err := Apply(fs, func(string) (string, bool) { return "hunter2", true })
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "(redacted)") {
		t.Fatalf("Apply with a bad sensitive value: got %v", err)
	}
}

func TestWriteTableListsOnlyTheCommandsVariables(t *testing.T) {
	fs, _, _ := newFlags()
	var b strings.Builder
	if err := WriteTable(&b, fs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Environment variables", "CAIRN_METRICS_BIND_ADDRESS", "--leader-elect"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "CAIRN_DEV_DIR") {
		t.Errorf("table lists a variable for a flag the command lacks:\n%s", out)
	}

	b.Reset()
	if err := WriteTable(&b, pflag.NewFlagSet("none", pflag.ContinueOnError)); err != nil || b.Len() != 0 {
		t.Errorf("a command without such flags printed %q, %v", b.String(), err)
	}
}

func TestGivenOnCommandLineTellsFlagsFromTheEnvironment(t *testing.T) {
	fs, _, _ := newFlags()
	if err := fs.Parse([]string{"--leader-elect"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CAIRN_METRICS_BIND_ADDRESS": ":9000"}
	if err := Apply(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if !GivenOnCommandLine(fs, "leader-elect") {
		t.Error("--leader-elect was given on the command line")
	}
	if GivenOnCommandLine(fs, "metrics-bind-address") {
		t.Error("--metrics-bind-address came from the environment, not the command line")
	}
	if GivenOnCommandLine(fs, "no-such-flag") {
		t.Error("a flag that does not exist was given")
	}
}
