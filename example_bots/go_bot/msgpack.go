package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// The part of msgpack the protocol needs, in both directions.
//
// Decoding gives plain Go values: map[string]any for a map, []any for an array, int64 for every
// integer (the protocol's integers fit in 64 bits; never read them into an int32), float64,
// bool, string, nil, and []byte for bin. Encoding takes the same values (and int); a map's keys
// are written sorted, so that the same value always gives the same bytes.

// errTruncated is a message that ends inside a value.
var errTruncated = errors.New("truncated message")

// Decode decodes one complete msgpack value.
func Decode(data []byte) (any, error) {
	d := decoder{data: data}
	value, err := d.read(0)
	if err != nil {
		return nil, err
	}
	if d.pos != len(d.data) {
		return nil, errors.New("bytes after the value")
	}
	return value, nil
}

type decoder struct {
	data []byte
	pos  int
}

// take returns the next n bytes.
func (d *decoder) take(n uint64) ([]byte, error) {
	if n > uint64(len(d.data)-d.pos) {
		return nil, errTruncated
	}
	out := d.data[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return out, nil
}

// uint reads a big-endian unsigned integer of n (1, 2, 4 or 8) bytes.
func (d *decoder) uint(n uint64) (uint64, error) {
	b, err := d.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

func (d *decoder) read(depth int) (any, error) {
	if depth > 16 {
		return nil, errors.New("nested too deeply")
	}
	head, err := d.take(1)
	if err != nil {
		return nil, err
	}
	b := head[0]
	switch {
	case b <= 0x7f: // positive fixint
		return int64(b), nil
	case b >= 0xe0: // negative fixint
		return int64(int8(b)), nil
	case b&0xf0 == 0x80:
		return d.readMap(uint64(b&0x0f), depth)
	case b&0xf0 == 0x90:
		return d.readArray(uint64(b&0x0f), depth)
	case b&0xe0 == 0xa0:
		return d.readString(uint64(b & 0x1f))
	}
	switch b {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6: // bin 8, 16, 32
		size, err := d.uint(1 << (b - 0xc4))
		if err != nil {
			return nil, err
		}
		raw, err := d.take(size)
		return append([]byte(nil), raw...), err
	case 0xca:
		v, err := d.uint(4)
		return float64(math.Float32frombits(uint32(v))), err
	case 0xcb:
		v, err := d.uint(8)
		return math.Float64frombits(v), err
	case 0xcc, 0xcd, 0xce, 0xcf: // uint 8, 16, 32, 64 (above 2^63 wraps: never sent)
		v, err := d.uint(1 << (b - 0xcc))
		return int64(v), err
	case 0xd0:
		v, err := d.uint(1)
		return int64(int8(v)), err
	case 0xd1:
		v, err := d.uint(2)
		return int64(int16(v)), err
	case 0xd2:
		v, err := d.uint(4)
		return int64(int32(v)), err
	case 0xd3:
		v, err := d.uint(8)
		return int64(v), err
	case 0xd9, 0xda, 0xdb: // str 8, 16, 32
		size, err := d.uint(1 << (b - 0xd9))
		if err != nil {
			return nil, err
		}
		return d.readString(size)
	case 0xdc, 0xdd: // array 16, 32
		size, err := d.uint(2 << (b - 0xdc))
		if err != nil {
			return nil, err
		}
		return d.readArray(size, depth)
	case 0xde, 0xdf: // map 16, 32
		size, err := d.uint(2 << (b - 0xde))
		if err != nil {
			return nil, err
		}
		return d.readMap(size, depth)
	}
	return nil, fmt.Errorf("unsupported msgpack type 0x%02x", b)
}

func (d *decoder) readString(size uint64) (any, error) {
	raw, err := d.take(size)
	return string(raw), err
}

func (d *decoder) readArray(size uint64, depth int) (any, error) {
	if size > uint64(len(d.data)-d.pos) { // every item takes a byte at least
		return nil, errTruncated
	}
	list := make([]any, 0, size)
	for i := uint64(0); i < size; i++ {
		item, err := d.read(depth + 1)
		if err != nil {
			return nil, err
		}
		list = append(list, item)
	}
	return list, nil
}

func (d *decoder) readMap(size uint64, depth int) (any, error) {
	if size > uint64(len(d.data)-d.pos) {
		return nil, errTruncated
	}
	m := make(map[string]any, size)
	for i := uint64(0); i < size; i++ {
		key, err := d.read(depth + 1)
		if err != nil {
			return nil, err
		}
		name, ok := key.(string)
		if !ok {
			return nil, errors.New("a map key that is not a string")
		}
		if m[name], err = d.read(depth + 1); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Encode encodes a value made of the types Decode returns (and int).
func Encode(value any) ([]byte, error) {
	return appendValue(nil, value)
}

func appendValue(out []byte, value any) ([]byte, error) {
	switch v := value.(type) {
	case nil:
		return append(out, 0xc0), nil
	case bool:
		if v {
			return append(out, 0xc3), nil
		}
		return append(out, 0xc2), nil
	case int:
		return appendInt(out, int64(v)), nil
	case int64:
		return appendInt(out, v), nil
	case float64:
		return binary.BigEndian.AppendUint64(append(out, 0xcb), math.Float64bits(v)), nil
	case string:
		out = appendHeader(out, len(v), 0xa0, 31, 0xd9, 0xda, 0xdb)
		return append(out, v...), nil
	case []byte:
		out = appendHeader(out, len(v), 0, -1, 0xc4, 0xc5, 0xc6)
		return append(out, v...), nil
	case []any:
		out = appendHeader(out, len(v), 0x90, 15, -1, 0xdc, 0xdd)
		var err error
		for _, item := range v {
			if out, err = appendValue(out, item); err != nil {
				return nil, err
			}
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for key := range v {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		out = appendHeader(out, len(v), 0x80, 15, -1, 0xde, 0xdf)
		var err error
		for _, key := range keys {
			out, _ = appendValue(out, key)
			if out, err = appendValue(out, v[key]); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot encode a %T", value)
}

// appendHeader writes a str/bin/array/map header: the fix form up to fixMax, else the 8-, 16- or
// 32-bit form (code8 -1: the type has no 8-bit form).
func appendHeader(out []byte, size int, fix byte, fixMax int, code8, code16, code32 int) []byte {
	switch {
	case size <= fixMax:
		return append(out, fix|byte(size))
	case code8 >= 0 && size <= 0xff:
		return append(out, byte(code8), byte(size))
	case size <= 0xffff:
		return binary.BigEndian.AppendUint16(append(out, byte(code16)), uint16(size))
	}
	return binary.BigEndian.AppendUint32(append(out, byte(code32)), uint32(size))
}

func appendInt(out []byte, n int64) []byte {
	if n >= -32 && n <= 0x7f { // positive or negative fixint
		return append(out, byte(n))
	}
	// int 64: always correct, a few bytes longer than needed
	return binary.BigEndian.AppendUint64(append(out, 0xd3), uint64(n))
}
