package main

import (
	"strconv"
	"strings"
)

// flagValueError is the usage error for a value a flag was given and a
// library refused, naming the flag as typed: `--grep "(": missing
// closing )`. The libraries name a value they refuse their own way, in
// front of the reason (`threshold "p99<1": want ...`): that prefix, up to
// the quoted value, is dropped.
func flagValueError(flag, value string, err error) error {
	why := err.Error()
	if _, after, ok := strings.Cut(why, strconv.Quote(value)+": "); ok {
		why = after
	}
	return usageError("--%s %q: %s", flag, value, why)
}
