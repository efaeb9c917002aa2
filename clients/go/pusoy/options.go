package pusoy

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

const (
	// DefaultAddress is the referee's default address.
	DefaultAddress = "127.0.0.1:50051"
	// DefaultReconnectWindow is how long the runner keeps trying to get its seat back
	// after losing it (or to reach the referee at all) before giving up: long enough
	// for a referee restart.
	DefaultReconnectWindow = 60 * time.Second
	// DefaultSafetyMargin is how long before the end of the budget the answer is due.
	DefaultSafetyMargin = 50 * time.Millisecond
)

// Options configure Run (docs/kits.md, section 7).
type Options struct {
	Address string // host:port of the referee
	Token   string // the seat's secret token
	Name    string // the bot's name in the referee's logs; default "go-bot"

	// NoLegalPlays stops the referee from listing the legal plays in every prompt.
	NoLegalPlays bool
	// NoTimeBank keeps the seat's time bank out of the budget.
	NoTimeBank bool
	// ReconnectWindow overrides DefaultReconnectWindow when positive.
	ReconnectWindow time.Duration
	// SafetyMargin overrides DefaultSafetyMargin when positive.
	SafetyMargin time.Duration
	// BatchEvents asks for the events batched into the prompts (Hello.batch_events,
	// docs/protocol.md 3.5): fewer messages; OnEvent still sees every event, just
	// before the bot's turn.
	BatchEvents bool

	// TLS turns on TLS with the system's CAs; TLSCA, TLSCert and TLSKey imply it.
	TLS           bool
	TLSCA         string // PEM file of the CA that signs the referee's certificate
	TLSCert       string // PEM client certificate, for mutual TLS (with TLSKey)
	TLSKey        string
	TLSServerName string // the name to check instead of the address's host

	// Logger receives the runner's messages; nil: slog.Default().
	Logger *slog.Logger
	// Stderr receives the raised marker line (docs/kits.md, section 5); nil: os.Stderr.
	Stderr io.Writer
	// DialOptions are added to the gRPC client's.
	DialOptions []grpc.DialOption
}

// UsageError is a bad flag or setting (exit 64).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func (o *Options) usesTLS() bool { return o.TLS || o.TLSCA != "" || o.TLSCert != "" || o.TLSKey != "" }

// TransportCredentials are the credentials the options ask for (insecure without TLS);
// a *UsageError when a file cannot be read.
func (o *Options) TransportCredentials() (credentials.TransportCredentials, error) {
	if !o.usesTLS() {
		return insecure.NewCredentials(), nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.TLSServerName}
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, &UsageError{fmt.Sprintf("cannot read the CA file: %v", err)}
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, &UsageError{fmt.Sprintf("no certificate in the CA file %s", o.TLSCA)}
		}
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, &UsageError{"--tls-cert and --tls-key go together"}
	}
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, &UsageError{fmt.Sprintf("cannot read the client certificate: %v", err)}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}

// Check reports what cannot work (a *UsageError): no token, unreadable TLS files.
func (o *Options) Check() error {
	if o.Token == "" {
		return &UsageError{"a seat token is needed: --token or PUSOY_TOKEN"}
	}
	if o.Address == "" {
		return &UsageError{"no referee address (--address or PUSOY_ADDRESS)"}
	}
	_, err := o.TransportCredentials()
	return err
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// EnvBool reads a boolean environment variable ("1", "true", ...); false when unset
// or unreadable.
func EnvBool(name string) bool {
	v, err := strconv.ParseBool(os.Getenv(name))
	return err == nil && v
}

func envMillis(name string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, &UsageError{fmt.Sprintf("%s: not a number of milliseconds: %q", name, v)}
	}
	return time.Duration(n) * time.Millisecond, nil
}

// ParseCommandLine reads the kits' common flags (each defaulting to its PUSOY_*
// variable) and any flags extra registers; a *UsageError when they are wrong.
func ParseCommandLine(name string, args []string, extra func(fs *flag.FlagSet)) (Options, error) {
	o := Options{Name: name}
	window, err := envMillis("PUSOY_RECONNECT_WINDOW_MS", DefaultReconnectWindow)
	if err != nil {
		return o, err
	}
	margin, err := envMillis("PUSOY_SAFETY_MARGIN_MS", DefaultSafetyMargin)
	if err != nil {
		return o, err
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.Address, "address", envOr("PUSOY_ADDRESS", DefaultAddress), "referee address host:port (PUSOY_ADDRESS)")
	fs.StringVar(&o.Token, "token", os.Getenv("PUSOY_TOKEN"), "the seat's token (PUSOY_TOKEN)")
	fs.DurationVar(&o.ReconnectWindow, "reconnect-window", window, "how long to retry after losing the seat")
	windowMs := fs.Int("reconnect-window-ms", -1, "the same in ms (PUSOY_RECONNECT_WINDOW_MS, 60000)")
	marginMs := fs.Int("safety-margin-ms", -1, "answer this long before the budget ends (PUSOY_SAFETY_MARGIN_MS, 50)")
	fs.BoolVar(&o.BatchEvents, "batch-events", EnvBool("PUSOY_BATCH_EVENTS"), "events batched into the prompts (PUSOY_BATCH_EVENTS=1)")
	fs.BoolVar(&o.TLS, "tls", EnvBool("PUSOY_TLS"), "TLS with the system's CAs (PUSOY_TLS=1)")
	fs.StringVar(&o.TLSCA, "tls-ca", os.Getenv("PUSOY_TLS_CA"), "CA file of the referee's certificate (PUSOY_TLS_CA)")
	fs.StringVar(&o.TLSCert, "tls-cert", os.Getenv("PUSOY_TLS_CERT"), "client certificate for mutual TLS (PUSOY_TLS_CERT)")
	fs.StringVar(&o.TLSKey, "tls-key", os.Getenv("PUSOY_TLS_KEY"), "client key for mutual TLS (PUSOY_TLS_KEY)")
	fs.StringVar(&o.TLSServerName, "tls-server-name", os.Getenv("PUSOY_TLS_SERVER_NAME"), "name to check in the certificate (PUSOY_TLS_SERVER_NAME)")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
		}
		return o, &UsageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return o, &UsageError{fmt.Sprintf("unexpected arguments: %v", fs.Args())}
	}
	if *windowMs >= 0 {
		o.ReconnectWindow = time.Duration(*windowMs) * time.Millisecond
	}
	o.SafetyMargin = margin
	if *marginMs >= 0 {
		o.SafetyMargin = time.Duration(*marginMs) * time.Millisecond
	}
	return o, o.Check()
}
