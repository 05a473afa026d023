package fleetdevice_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetapi/fleet"
	"github.com/fleetkit/fleetapi/fleetdevice"
	"github.com/fleetkit/fleetapi/fleetdevice/devicetest"
	"github.com/fleetkit/fleetapi/internal/pgtest"
	"github.com/fleetkit/fleetapi/memstore"
	"github.com/fleetkit/fleetapi/sqlstore"
)

// benchDevice is a simulated Teltonika connected and logged in, for the
// benchmarks (which cannot use testing.T's helpers).
type benchDevice struct {
	dev *devicetest.Teltonika
	c   net.Conn
	rd  *bufio.Reader
}

func dialBench(b *testing.B, addr, imei string) *benchDevice {
	b.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	d := &benchDevice{dev: &devicetest.Teltonika{IMEI: imei}, c: c, rd: bufio.NewReader(c)}
	hello, want := d.dev.Hello()
	if _, err := c.Write(hello); err != nil {
		b.Fatal(err)
	}
	if _, err := devicetest.Read(d.rd, want); err != nil {
		b.Fatal(err)
	}
	return d
}

// quantile returns the q quantile of ds (sorted in place).
func quantile(ds []time.Duration, q float64) time.Duration {
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*q))]
}

// BenchmarkCommandToDevice measures how long a command takes from the
// start of its POST (the service's CreateCommand) until the device has
// read it off its connection: on the same server (memstore), and, with
// FLEET_TEST_POSTGRES, posted to another server than the one holding the
// connection, on one PostgreSQL database. It reports the p50 and p99 of
// the iterations (run -benchtime 1000x for the targets' 1,000 commands),
// and the p99 of CreateCommand alone measured in the same run, of which
// the latency is the ratio.
func BenchmarkCommandToDevice(b *testing.B) {
	b.Run("same_server", func(b *testing.B) {
		benchCommandLatency(b, memstore.New(), nil)
	})
	b.Run("other_server", func(b *testing.B) {
		dsn := os.Getenv("FLEET_TEST_POSTGRES")
		if dsn == "" {
			b.Skip("FLEET_TEST_POSTGRES is unset")
		}
		schema := pgtest.NewSchema(b, dsn)
		open := func() *sqlstore.Store {
			s, err := sqlstore.Open(context.Background(), schema)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}
		benchCommandLatency(b, open(), open())
	})
}

func benchCommandLatency(b *testing.B, store, other fleet.Store) {
	r := newBenchRig(b, store, "356307042441013")
	poster := r.svc
	if other != nil {
		fctx, cancel := context.WithCancel(context.Background())
		b.Cleanup(cancel)
		go r.svc.Jobs().FollowCommands(fctx)
		<-r.svc.Jobs().FollowingCommands()
		poster = fleet.NewService(other, fleet.Options{})
	}
	d := dialBench(b, r.listen(fleetdevice.Teltonika()), r.d.Identifier)
	lat := make([]time.Duration, 0, b.N)
	post := make([]time.Duration, 0, b.N)
	in := fleet.CommandInput{Type: fleet.CommandPositionRequest}
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := poster.CreateCommand(context.Background(), r.p, r.d.ID, in); err != nil {
			b.Fatal(err)
		}
		post = append(post, time.Since(t0))
		cmd, err := devicetest.Read(d.rd, d.dev.Command)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		answer, err := d.dev.Answer(cmd)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.c.Write(answer); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	p99, p99post := quantile(lat, 0.99), quantile(post, 0.99)
	b.ReportMetric(float64(quantile(lat, 0.5).Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(p99post.Microseconds())/1000, "post_p99_ms")
	b.ReportMetric(float64(p99)/float64(p99post), "p99/post")
}

// newBenchRig is newCommandRig for a benchmark.
func newBenchRig(b *testing.B, store fleet.Store, identifier string) *commandRig {
	b.Helper()
	return newCommandRig(b, store, identifier)
}

// BenchmarkCommandsToManyDevices connects FLEET_BENCH_COMMAND_DEVICES
// simulated Teltonika devices (1,000 by default; 10,000 for the target,
// which needs as many file descriptors twice over: ulimit -n 32768) to one
// server on memstore, posts one command to each, and waits until every
// device has read its own: all delivered, and how long that took. It
// also measures the Go heap each queued command takes, queued for devices
// that are not connected (the store's copy and the service's marks).
func BenchmarkCommandsToManyDevices(b *testing.B) {
	n := 1000
	if v := os.Getenv("FLEET_BENCH_COMMAND_DEVICES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("FLEET_BENCH_COMMAND_DEVICES=%q: not a count", v)
		}
	}
	for range b.N {
		b.StopTimer()
		store := memstore.New()
		r := newBenchRig(b, store, "dev-0")
		ids := []string{r.d.ID}
		for i := 1; i < n; i++ {
			d, err := r.svc.CreateDevice(context.Background(), r.p, fleet.Device{Identifier: fmt.Sprintf("dev-%d", i)})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, d.ID)
		}
		in := fleet.CommandInput{Type: fleet.CommandCustom, Text: ptr("getver")}
		// The heap of queued commands, their devices offline.
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		queued := make([]string, 0, n)
		for _, id := range ids {
			c, err := r.svc.CreateCommand(context.Background(), r.p, id, in)
			if err != nil {
				b.Fatal(err)
			}
			queued = append(queued, c.ID)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap_B/queued_command")
		for _, id := range queued {
			if _, err := r.svc.CancelCommand(context.Background(), r.p, id); err != nil {
				b.Fatal(err)
			}
		}

		// Every device connected (from one address: the caps raised),
		// then a command to each.
		r.srv.Close()
		r.srv = fleetdevice.NewServer(r.svc.DeviceEdge(), fleetdevice.Options{Now: r.clock.Now, MaxConns: n + 16, MaxConnsPerAddr: n + 16})
		addr := r.listen(fleetdevice.Teltonika())
		devs := make([]*benchDevice, n)
		for i := range n {
			devs[i] = dialBench(b, addr, fmt.Sprintf("dev-%d", i))
		}
		b.StartTimer()
		t0 := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for _, d := range devs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.c.SetReadDeadline(time.Now().Add(time.Minute))
				if _, err := devicetest.Read(d.rd, d.dev.Command); err != nil {
					errs <- err
				}
			}()
		}
		for _, id := range ids {
			if _, err := r.svc.CreateCommand(context.Background(), r.p, id, in); err != nil {
				b.Fatal(err)
			}
		}
		wg.Wait()
		b.StopTimer()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(t0).Milliseconds()), "ms_all_delivered")
		b.ReportMetric(float64(n), "devices")
		if got := r.srv.Stats().CommandsSent; got > int64(n) {
			b.Fatalf("%d commands sent to %d devices", got, n)
		}
		for _, d := range devs {
			d.c.Close()
		}
		r.srv.Close()
	}
}

// BenchmarkReportsWhileCommandsFlow measures a connected Teltonika's
// reports (a one-record frame, acknowledged once stored) on memstore, in
// rounds of 50 that alternate between reports alone and reports while a
// command goes to the device and is answered after every fifth report:
// the reports' own time in each, whose ratio (alone / with commands, as
// throughput; and the median of the rounds' ratios, which a round that
// waited on another process does not swing) should stay 1 within noise.
// The device's answers are stored by the reading goroutine of its
// connection, between its reports.
func BenchmarkReportsWhileCommandsFlow(b *testing.B) {
	r := newBenchRig(b, memstore.New(), "356307042441013")
	d := dialBench(b, r.listen(fleetdevice.Teltonika()), r.d.Identifier)
	const round = 50
	at := deliveryT0
	report := func(sum *time.Duration) {
		t0 := time.Now()
		defer func() { *sum += time.Since(t0) }()
		at = at.Add(time.Second)
		r.clock.Set(at)
		frame, want := d.dev.Report([]devicetest.Point{{Time: at, Latitude: 52.52, Longitude: 13.40, Speed: 40, Satellites: 9, Valid: true}})
		if _, err := d.c.Write(frame); err != nil {
			b.Fatal(err)
		}
		if _, err := devicetest.Read(d.rd, want); err != nil {
			b.Fatal(err)
		}
	}
	in := fleet.CommandInput{Type: fleet.CommandPositionRequest}
	var alone, with time.Duration
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i += 2 * round {
		a0, w0 := alone, with
		for range round {
			report(&alone)
		}
		for k := range round {
			if k%5 == 0 {
				if _, err := r.svc.CreateCommand(context.Background(), r.p, r.d.ID, in); err != nil {
					b.Fatal(err)
				}
				cmd, err := devicetest.Read(d.rd, d.dev.Command)
				if err != nil {
					b.Fatal(err)
				}
				answer, _ := d.dev.Answer(cmd)
				if _, err := d.c.Write(answer); err != nil {
					b.Fatal(err)
				}
			}
			report(&with)
		}
		ratios = append(ratios, float64(alone-a0)/float64(with-w0))
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(float64(alone)/float64(with), "reports_ratio")
	b.ReportMetric(ratios[len(ratios)/2], "median_round_ratio")
}
