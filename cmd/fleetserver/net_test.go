package main

import "net"

func dialAddr(addr string) (net.Conn, error) { return net.Dial("tcp", addr) }
