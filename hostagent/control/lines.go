package control

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrLineTooLong is returned (wrapped) for a line longer than the reader's
// limit; the line is skipped and reading can go on.
var ErrLineTooLong = errors.New("line too long")

// LineReader reads newline-terminated lines of bounded length.
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewLineReader reads lines of at most max bytes from r (MaxLine for
// commands; events can be longer: a flow record lists every EV change).
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next non-blank line without its terminator, valid until
// the next call. At the end of input it returns io.EOF; a last line
// without a newline is still returned first.
func (l *LineReader) Next() ([]byte, error) {
	for {
		l.buf = l.buf[:0]
		tooLong := false
		for {
			chunk, err := l.r.ReadSlice('\n')
			if !tooLong {
				if len(l.buf)+len(chunk) > l.max+1 {
					tooLong = true
					l.buf = l.buf[:0]
				} else {
					l.buf = append(l.buf, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			if tooLong {
				return nil, fmt.Errorf("%w (limit %d bytes)", ErrLineTooLong, l.max)
			}
			line := bytes.TrimRight(l.buf, "\r\n")
			if len(bytes.TrimSpace(line)) == 0 {
				if err == io.EOF {
					return nil, io.EOF
				}
				break // blank line: read the next
			}
			if len(line) > l.max {
				return nil, fmt.Errorf("%w (limit %d bytes)", ErrLineTooLong, l.max)
			}
			return line, nil
		}
	}
}
