// Package prototest holds what the tests of the protocol packages of
// fleetdevice share: the readers of their test data (each package's
// testdata/corpus.jsonl, telematics.jsonl and traccar.txt; README.md here
// gives their forms), and the checks every decoder passes — a stream cut
// anywhere gives the same frames, garbage is refused without a panic, an
// attribute is one the API accepts, an impossible date is no fix — as
// well as the seeds and bodies of their fuzz targets and the baselines of
// their benchmarks.
//
// It is for tests only: it imports testing, and nothing of Fleet beyond
// devproto.
package prototest
