// Package cmdutil holds what every cairn command uses: the root command's wiring (the
// environment applied to flags, the help's environment table, usage errors), exit codes,
// the options flow of a command (Complete, Validate, Run), JSON output, input files,
// progress bars and the flags of the local chain.
//
// Nothing here exits the process: main maps the error a command returns to its exit
// code with ExitCode.
package cmdutil
