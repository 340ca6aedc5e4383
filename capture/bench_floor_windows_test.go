package capture

import (
	"io"
	"os"
	"os/exec"
)

// runForwardFloor starts argv with its stdin and stdout on pipes and
// copies this process's stdin to the child and the child's stdout to this
// process's stdout, with blocking reads and writes (Windows pipes have no
// other mode). It returns when the child's output ends.
func runForwardFloor(argv []string) int {
	if len(argv) == 0 {
		return 2
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return 3
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 3
	}
	if err := cmd.Start(); err != nil {
		return 127
	}
	go func() {
		io.Copy(in, os.Stdin)
		in.Close()
	}()
	io.Copy(os.Stdout, out)
	cmd.Wait()
	return 0
}
