//go:build !linux

package main

// hugePagesLoop does nothing where there are no transparent huge pages
// to ask for (hugePagesForRanks).
func hugePagesLoop() {}
