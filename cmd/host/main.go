// Command host is the sluice CLI: it plans, lints and runs pipelines and
// inspects and runs plugins. Every subcommand lives in its own file and
// registers itself with addCommand from an init function.
package main

import (
	"context"
	"io"
	"os"
)

func main() {
	ctx, stop := signalContext() // the first SIGINT or SIGTERM cancels, a second quits at once
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the CLI with args and returns the process exit code. Tests
// call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		var ec exitCode
		if asExitCode(err, &ec) {
			return int(ec)
		}
		root.PrintErrln("error:", withBuildHint(err, err.Error()))
		return 1
	}
	return 0
}
