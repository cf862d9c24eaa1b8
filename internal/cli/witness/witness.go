// Package witness is `cairn witness`: the transparency-log witness a federation member
// runs with its own key (keygen, serve).
package witness

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/atomicfile"
	"github.com/cairn-dev/cairn/internal/cli/cmdutil"
	"github.com/cairn-dev/cairn/internal/cli/serve"
	"github.com/cairn-dev/cairn/internal/witnessd"
	"github.com/cairn-dev/cairn/pkg/witness"
)

// NewCommand returns `cairn witness`.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "witness",
		Short: "Run a transparency-log witness that cosigns a federation's log checkpoints",
		Long: `A witness checks that each checkpoint a transparency log shows it extends the last one it
cosigned, and cosigns it (C2SP tlog-witness and tlog-cosignature). A federation whose
policy requires k of its members' witnesses cannot show one member a log and an auditor
another, or rewrite its log after a restore, without k of them refusing.`,
		Args: cmdutil.NoArgs,
	}
	cmd.AddCommand(newKeygenCommand(), newServeCommand())
	return cmd
}

type keygenOptions struct {
	cmdutil.NoCompletion
	name, keyFile string
	force         bool
}

func newKeygenCommand() *cobra.Command {
	o := &keygenOptions{}
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Generate a witness key and print its verifier key",
		Long: `Generate the witness's Ed25519 key, write it to --key (mode 0600; an existing file is
kept unless --force), and print its cosignature/v1 verifier key: the line a federation's
witness policy names the witness by.`,
		Args:    cmdutil.NoArgs,
		Example: `  cairn witness keygen --name witness.member-a.example --key witness.key`,
		RunE:    func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().StringVar(&o.name, "name", "", "the witness's name, e.g. witness.member-a.example (required)")
	cmd.Flags().StringVar(&o.keyFile, "key", "witness.key", "file to write the private key to")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite an existing key file")
	return cmd
}

func (o *keygenOptions) Validate() error {
	if o.name == "" {
		return cmdutil.UsageError{Err: errors.New("--name is required: the name the witness signs under")}
	}
	return nil
}

func (o *keygenOptions) Run(cmd *cobra.Command) error {
	if _, err := os.Stat(o.keyFile); err == nil && !o.force {
		return fmt.Errorf("%s exists: keep it, or pass --force to replace it (the witness's verifier key changes)", o.keyFile)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	skey, vkey, err := witness.GenerateSignerKey(o.name, rand.Reader)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(o.keyFile, []byte(skey+"\n"), 0o600); err != nil {
		return err
	}
	_, err = fmt.Fprintln(cmd.OutOrStdout(), vkey)
	return err
}

type serveOptions struct {
	cmdutil.NoCompletion
	keyFile, state, addr string
	logs                 []string
	logKeys              []witness.LogKey
}

func newServeCommand() *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the witness: POST /add-checkpoint",
		Long: `Serve the witness until interrupted. It cosigns checkpoints of the logs named by --log
(each a log's signed-note verifier key, <origin>+<hash>+<key>, as a federation's
GET /federation/log/witnesses states it in log_verifier_key), keeps in --state the latest
checkpoint it cosigned of each, and refuses any checkpoint that does not extend it. Its
state must outlive it: a witness that forgets what it cosigned cannot catch a rollback.

  POST /add-checkpoint          C2SP tlog-witness
  GET  /checkpoint/<origin>     the latest checkpoint it cosigned, with its cosignature
  GET  /conflicts/<origin>      the checkpoints it refused as split views, with the ones
                                they contradict (JSON)`,
		Args: cmdutil.NoArgs,
		Example: `  cairn witness serve --key witness.key --state witness.db \
    --log 'cairn.federation/cairn/cairn+0a7f1df3+AaPt...' --addr 127.0.0.1:8480`,
		RunE: func(cmd *cobra.Command, args []string) error { return cmdutil.Run(cmd, args, o) },
	}
	cmd.Flags().StringVar(&o.keyFile, "key", "witness.key", "the witness's private key (cairn witness keygen)")
	cmd.Flags().StringVar(&o.state, "state", "witness.db", "the witness's state, a SQLite file")
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8480", "address to listen on")
	cmd.Flags().StringArrayVar(&o.logs, "log", nil, "a log to witness: its verifier key (repeatable; at least one)")
	return cmd
}

func (o *serveOptions) Validate() error {
	if len(o.logs) == 0 {
		return cmdutil.UsageError{Err: errors.New("no --log: name each log to witness by its verifier key")}
	}
	for _, l := range o.logs {
		k, err := witness.ParseLogKey(l)
		if err != nil {
			return cmdutil.UsageError{Err: fmt.Errorf("--log: %w", err)}
		}
		o.logKeys = append(o.logKeys, k)
	}
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return cmdutil.UsageError{Err: fmt.Errorf("--addr %q: want host:port", o.addr)}
	}
	return nil
}

// Timeouts of the witness's HTTP server: its requests are small and quick.
const (
	readTimeout     = 10 * time.Second
	writeTimeout    = 30 * time.Second
	idleTimeout     = 2 * time.Minute
	shutdownTimeout = 10 * time.Second
)

func (o *serveOptions) Run(cmd *cobra.Command) error {
	ctx := cmd.Context()
	raw, err := os.ReadFile(o.keyFile)
	if err != nil {
		return fmt.Errorf("read the witness key: %w (make one with cairn witness keygen)", err)
	}
	cosigner, err := witness.ParseSignerKey(strings.TrimSpace(string(raw)))
	if err != nil {
		return fmt.Errorf("%s: %w", o.keyFile, err)
	}
	w, err := witnessd.Open(witnessd.Options{Cosigner: cosigner, Logs: o.logKeys, StatePath: o.state})
	if err != nil {
		return err
	}
	defer func() { _ = w.Close() }()
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	srv := &http.Server{Handler: w.Handler(), ReadHeaderTimeout: readTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn)}
	origins := make([]string, len(o.logKeys))
	for i, k := range o.logKeys {
		origins[i] = k.Origin
	}
	slog.InfoContext(ctx, "Started the witness", "url", "http://"+serve.DialAddress(l.Addr().String()),
		"verifierKey", cosigner.Key().String(), "logs", origins, "state", o.state)
	if err := cmdutil.ServeHTTP(ctx, srv, l, shutdownTimeout, "witness"); err != nil {
		return err
	}
	slog.InfoContext(ctx, "Stopped the witness", "state", o.state)
	return nil
}
