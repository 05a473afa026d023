package fleethttp_test

import (
	"context"
	"io"
	"net"
	"strings"
)

var ctx = context.Background()

func dialRaw(url string) (net.Conn, error) {
	return net.Dial("tcp", strings.TrimPrefix(url, "http://"))
}

func readAll(c net.Conn, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
