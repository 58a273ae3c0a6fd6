module github.com/gclock/gclock

go 1.26.8

require (
	github.com/klauspost/compress v1.20.3
	github.com/vmihailenco/msgpack/v5 v5.4.1
	gonum.org/v1/gonum v0.17.0
	google.golang.org/protobuf v1.36.11
)

require github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
