package main

import (
	"fmt"
	"io"

	"github.com/cockroachdb/errors"
	"github.com/spf13/cobra"

	"github.com/sessionlog/sessionlog/keys"
)

// keyFileEnv names the variable that gives --key-file's default.
const keyFileEnv = "LOGTOOL_KEY_FILE"

// addKeyFlags adds the flags that name the key of a store that seals its
// content (docs/forgetting.md#encryption-at-rest), to every command.
func addKeyFlags(g *globalOptions, root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.StringVar(&g.keyFile, "key-file", "", "a key file `PATH`, the key-encryption key of a store that seals its content (default: $"+keyFileEnv+")")
	pf.StringVar(&g.keyEnv, "key-env", "", "the environment variable `NAME` that holds the key-encryption key, in base64, instead of --key-file")
}

// keyProvider returns the key provider the command line names: the key
// file of --key-file (else $LOGTOOL_KEY_FILE), or the key in the variable
// --key-env names; nil when it names none. Both at once is a usage error;
// a key that cannot be read, an error of class keys.
func (g *globalOptions) keyProvider() (keys.Provider, error) {
	file := g.keyFile
	if file == "" && g.keyEnv == "" {
		file = g.env.getenv(keyFileEnv)
	}
	switch {
	case file != "" && g.keyEnv != "":
		return nil, usagef("--key-file and --key-env both name a key: give one")
	case file != "":
		k, err := keys.ReadFile(file)
		if err != nil {
			return nil, errors.WithHint(err, "'logtool keys init --file PATH' writes a new key file")
		}
		return k, nil
	case g.keyEnv != "":
		k, err := keys.FromEnv(g.keyEnv, g.env.getenv)
		if err != nil {
			return nil, errors.WithHintf(err, "'base64 -w0 KEYFILE' prints a key file's key as $%s should hold it", errors.Safe(g.keyEnv))
		}
		return k, nil
	}
	return nil, nil
}

func newKeysCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Create and identify the key-encryption keys of stores that seal their content",
		Long: `A store that seals its content (docs/forgetting.md#encryption-at-rest) keeps each session's data key wrapped
by a key-encryption key held outside the store: a key file (--key-file, else
$LOGTOOL_KEY_FILE; 32 random bytes, mode 0600, the user's own), or an
environment variable that holds the key in base64 (--key-env NAME).`,
		Args: maxArgs(0),
		RunE: g.action(func(*cobra.Command, []string) error {
			return usagef("keys: no command given (init, id)")
		}),
	}
	cmd.AddCommand(newKeysInitCmd(g, stdout, stderr), newKeysIDCmd(g, stdout))
	return cmd
}

func newKeysInitCmd(g *globalOptions, stdout, stderr io.Writer) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "init --file PATH",
		Short: "Write a new key file and print its key id",
		Long: `Write a new key file at PATH (--file, else --key-file or $LOGTOOL_KEY_FILE): 32
random bytes, mode 0600, synced to disk. A file at PATH is never replaced.
Prints the key's id, never the key. Keep a copy of the file somewhere safe:
what is sealed under it cannot be read without it.`,
		Args: maxArgs(0),
		RunE: g.action(func(*cobra.Command, []string) error {
			path := file
			if path == "" {
				path = g.keyFile
			}
			if path == "" {
				path = g.env.getenv(keyFileEnv)
			}
			if path == "" {
				return usagef("keys init: --file PATH names the new key file")
			}
			k, err := keys.CreateFile(path)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintln(stdout, k.KeyID()); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "wrote key %s to %s; keep a copy somewhere safe: what is sealed under it cannot be read without it\n",
				k.KeyID(), path)
			return nil
		}),
	}
	cmd.Flags().StringVar(&file, "file", "", "the new key file's `PATH`")
	return cmd
}

func newKeysIDCmd(g *globalOptions, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "id",
		Short: "Print the id of the key --key-file, $LOGTOOL_KEY_FILE or --key-env names",
		Long: `Print the id of the key-encryption key the command line names: the id that a
store records, and that an error about a missing key names.`,
		Args: maxArgs(0),
		RunE: g.action(func(*cobra.Command, []string) error {
			p, err := g.keyProvider()
			if err != nil {
				return err
			}
			if p == nil {
				return usagef("keys id: no key given: --key-file PATH, $%s or --key-env NAME", errors.Safe(keyFileEnv))
			}
			_, err = fmt.Fprintln(stdout, p.KeyID())
			return err
		}),
	}
}
