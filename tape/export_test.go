package tape

// Helpers of the internal tests, for the external ones (package
// tape_test), which write their tapes with internal/tapetest: a test of
// package tape itself cannot import that package, which imports tape.
var (
	TestHeader = testHeader
	Msg        = msg
	Drain      = drain
)
