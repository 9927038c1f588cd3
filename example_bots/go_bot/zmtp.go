package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
)

// A ZeroMQ DEALER socket connected to an ipc:// endpoint, written from the ZMTP 3.0
// specification (rfc.zeromq.org/spec/23) with the NULL security mechanism: enough to talk to the
// referee's ROUTER socket with nothing but Go's standard library.
//
// On the wire: each side sends a 64-byte greeting, then a READY command naming its socket type;
// after that every message is a frame of one flags byte (bit 0: more frames follow, bit 1: 8-byte
// size, bit 2: a command), its size (1 or 8 bytes, big-endian) and its body.

const (
	flagMore    = 1
	flagLong    = 2
	flagCommand = 4
	// maxFrame bounds what a frame's size field may claim (the referee's messages are a few KB).
	maxFrame = 1 << 30
)

// errPeerError is the peer's ERROR command: the connection is over.
var errPeerError = errors.New("the peer closed the connection with an ERROR command")

// Zmtp is one DEALER connection.
type Zmtp struct {
	conn net.Conn
	in   *bufio.Reader
}

// Connect connects to ipc://PATH and completes the handshake.
func Connect(endpoint string) (*Zmtp, error) {
	if !strings.HasPrefix(endpoint, "ipc://") {
		return nil, fmt.Errorf("not an ipc:// endpoint: %s", endpoint)
	}
	conn, err := net.Dial("unix", strings.TrimPrefix(endpoint, "ipc://"))
	if err != nil {
		return nil, err
	}
	socket := &Zmtp{conn: conn, in: bufio.NewReader(conn)}
	if err := socket.handshake(); err != nil {
		conn.Close()
		return nil, err
	}
	return socket, nil
}

func (z *Zmtp) handshake() error {
	greeting := make([]byte, 64)
	greeting[0] = 0xff // signature: 0xff, 8 bytes of padding, 0x7f
	greeting[9] = 0x7f
	greeting[10] = 3 // version 3.0
	greeting[11] = 0
	copy(greeting[12:32], "NULL") // the mechanism: 20 bytes, zero-padded
	// greeting[32] = 0: as-server false; the rest is filler
	if _, err := z.conn.Write(append(greeting, readyCommand("DEALER")...)); err != nil {
		return err
	}
	peer := make([]byte, 64)
	if _, err := io.ReadFull(z.in, peer); err != nil {
		return err
	}
	if peer[0] != 0xff || peer[9] != 0x7f || peer[10] < 3 {
		return errors.New("the peer does not speak ZMTP 3")
	}
	if mechanism := strings.TrimRight(string(peer[12:32]), "\x00"); mechanism != "NULL" {
		return fmt.Errorf("the peer wants the security mechanism %q", mechanism)
	}
	flags, body, err := z.readFrame()
	if err != nil {
		return err
	}
	if flags&flagCommand == 0 || commandName(body) != "READY" {
		return fmt.Errorf("expected READY, got %q", commandName(body))
	}
	return nil
}

// readyCommand is a READY command frame with one property, Socket-Type.
func readyCommand(socketType string) []byte {
	body := []byte{byte(len("READY"))}
	body = append(body, "READY"...)
	body = append(body, byte(len("Socket-Type")))
	body = append(body, "Socket-Type"...)
	body = binary.BigEndian.AppendUint32(body, uint32(len(socketType)))
	body = append(body, socketType...)
	return append([]byte{flagCommand, byte(len(body))}, body...)
}

func commandName(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	size := int(body[0])
	if size > len(body)-1 {
		size = len(body) - 1
	}
	return string(body[1 : 1+size])
}

// Send sends one single-frame message.
func (z *Zmtp) Send(message []byte) error {
	var header []byte
	if len(message) <= 255 {
		header = []byte{0, byte(len(message))}
	} else {
		header = binary.BigEndian.AppendUint64([]byte{flagLong}, uint64(len(message)))
	}
	_, err := z.conn.Write(append(header, message...))
	return err
}

// Receive returns the next message (its frames joined: the referee sends one frame per message).
// Commands are skipped (PING, say: heartbeats are off by default); an ERROR command is
// errPeerError, the end of the connection io.EOF.
func (z *Zmtp) Receive() ([]byte, error) {
	var message []byte
	for {
		flags, body, err := z.readFrame()
		if err != nil {
			return nil, err
		}
		if flags&flagCommand != 0 {
			if commandName(body) == "ERROR" {
				return nil, errPeerError
			}
			continue
		}
		message = append(message, body...)
		if flags&flagMore == 0 {
			return message, nil
		}
	}
}

// readFrame reads one frame: its flags byte and its body.
func (z *Zmtp) readFrame() (byte, []byte, error) {
	flags, err := z.in.ReadByte()
	if err != nil {
		return 0, nil, err // io.EOF: the referee closed the connection
	}
	var size uint64
	if flags&flagLong != 0 {
		var buf [8]byte
		if _, err := io.ReadFull(z.in, buf[:]); err != nil {
			return 0, nil, unexpected(err)
		}
		size = binary.BigEndian.Uint64(buf[:])
	} else {
		b, err := z.in.ReadByte()
		if err != nil {
			return 0, nil, unexpected(err)
		}
		size = uint64(b)
	}
	if size > maxFrame {
		return 0, nil, fmt.Errorf("a frame of %d bytes", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(z.in, body); err != nil {
		return 0, nil, unexpected(err)
	}
	return flags, body, nil
}

// unexpected turns an end of input inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Close closes the connection.
func (z *Zmtp) Close() error {
	return z.conn.Close()
}
