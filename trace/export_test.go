package trace

// WithFormat4 exports withFormat4 to this directory's external tests.
var WithFormat4 = withFormat4

// WithFormat5 exports withFormat5 to this directory's external tests.
var WithFormat5 = withFormat5
