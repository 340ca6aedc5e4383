package proc

// ignoreTerm has nothing to ignore: Windows delivers no SIGTERM (Stop
// terminates the job instead).
func ignoreTerm() {}
