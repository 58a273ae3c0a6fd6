//go:build !cgo

package mpirt

func (w *World) loop(lib string, errc chan<- error) {
	errc <- ErrUnavailable
}

func send(b []byte, dest, tag int) int  { return -1 }
func recv(b []byte, src, tag int) int   { return -1 }
func finalize() int                     { return -1 }
func isend(b []byte, dest, tag int) int { return -1 }
func test() (bool, int)                 { return false, -1 }
func iprobe(src, tag int) (bool, int)   { return false, -1 }
func abort(code int)                    {}
