package main

import (
	"fmt"
	"strconv"
	"time"
)

// envDefault returns the value of the environment variable name parsed by
// parse, or def when it is unset: the default of the flag it stands in for.
func envDefault[T any](getenv func(string) string, name string, def T, parse func(string) (T, error)) (T, error) {
	s := getenv(name)
	if s == "" {
		return def, nil
	}
	v, err := parse(s)
	if err != nil {
		return def, fmt.Errorf("%s=%q: %w", name, s, err)
	}
	return v, nil
}

// envDuration is envDefault for durations ("30s").
func envDuration(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	return envDefault(getenv, name, def, time.ParseDuration)
}

// envInt is envDefault for whole numbers.
func envInt(getenv func(string) string, name string, def int) (int, error) {
	return envDefault(getenv, name, def, strconv.Atoi)
}
