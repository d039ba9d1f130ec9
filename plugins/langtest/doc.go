// Package langtest holds the tests of the plugins written in languages
// other than Go (plugins/<name>/{c,rust,as}/ and plugins/wat/): their
// modules' imports and exports, their output through the real host
// (host/plugin) compared byte for byte with the Go plugins', and the
// Unicode tables the C, Rust and AssemblyScript SDKs share with Go.
//
// The modules are built by scripts/build-plugins.sh (make plugins-langs).
// A module that is missing is skipped with a note, unless
// SLUICE_REQUIRE_LANGS is set (plugins.mk sets it): then it fails.
package langtest
