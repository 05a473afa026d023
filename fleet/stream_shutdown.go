package fleet

// EndStreams ends every live stream open on the service, for a server that
// is shutting down: the stream requests then finish instead of holding the
// shutdown until its deadline, and their clients reconnect (to another
// server, or to this one restarted) with Last-Event-ID. It returns how many
// streams it ended.
func (j Jobs) EndStreams() int {
	b := &j.s.stream
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, subs := range b.subs {
		for sub := range subs {
			b.end(sub, ErrStreamClosed)
			n++
		}
	}
	return n
}
