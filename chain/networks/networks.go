package networks

// Network is one network of a chain: the name stakeflow and the staking service use for it and
// the identity that proves it.
type Network[ID comparable] struct {
	// Name is the network's name in the staking service's paths and in operations' inputs.
	Name string
	// ID is the network's identity (a genesis hash, a chain id, a chain name); its meaning and
	// source are stated on each catalogue.
	ID ID
}

// Catalogue is one chain's networks, in a fixed order.
type Catalogue[ID comparable] []Network[ID]

// Names returns the networks' names, in the catalogue's order (a new slice).
func (c Catalogue[ID]) Names() []string {
	out := make([]string, len(c))
	for i, n := range c {
		out[i] = n.Name
	}
	return out
}

// Has reports whether name is one of the catalogue's networks.
func (c Catalogue[ID]) Has(name string) bool {
	_, ok := c.ID(name)
	return ok
}

// ID returns the identity of the network name; ok is false when the catalogue lacks it.
func (c Catalogue[ID]) ID(name string) (id ID, ok bool) {
	for _, n := range c {
		if n.Name == name {
			return n.ID, true
		}
	}
	return id, false
}
