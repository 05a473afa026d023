module github.com/fleetkit/fleetapi

go 1.26.8

require (
	github.com/getkin/kin-openapi v0.152.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/matryer/is v1.4.1 // indirect
	golang.org/x/time v0.16.0 // indirect
)
