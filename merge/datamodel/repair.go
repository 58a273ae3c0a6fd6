package datamodel

// Repair is one violation to repair: rank's event at global time G (ns,
// relative to the run origin) must move forward by at least D ns.
type Repair struct {
	Rank int32
	G, D float64
}
