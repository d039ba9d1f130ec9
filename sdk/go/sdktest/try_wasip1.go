//go:build wasip1

package sdktest

// Try needs the native fake host; under GOOS=wasip1 the SDK calls the real
// host imports, so runs are refused (and Run skips the test).
func Try(opts Options, in ...Record) (*Result, error) { return nil, errNotNative }
