// Package pangolin is the direct sink: it publishes the engine's desired state through
// Pangolin's Integration API, without pangolin-operator or its CRDs. A tunnel is a
// Pangolin site, named by its niceId. It must never modify or delete a resource it did
// not create: ownership is read from marks, as external-dns reads its owner id.
//
// Marks. Every resource PIC creates gets the niceId "pic-<owner id>-<hash>", the hash
// being the first 16 hex digits of sha256("<kind>/<namespace>/<name>/<source host>"),
// and the name "<public host> (<Kind> <namespace>/<name>)" (", host <source host>"
// inside the brackets when annotations publish the host under another name): readable
// in Pangolin's dashboard, and parseable back into the origin. A resource is this PIC's
// only if its niceId has the owner id's prefix, its name parses, and the niceId is the
// one the parsed origin and host give. Pangolin's create takes no niceId, so a create is
// two calls: PUT the resource, then POST its niceId with sso and blockAccess; if the
// second fails, the resource is deleted. A resource whose name is exactly the one PIC
// would write but whose niceId is still Pangolin's random one (PIC stopped between the
// two calls, or the delete failed too) is adopted when PIC next creates that host,
// rather than reported as a conflict.
//
// Hosts. Pangolin accepts several resources on one host: before a create the sink
// searches the host, and a resource on it that is not this owner id's makes the host a
// HostTakenInPangolin, with nothing written.
//
// Ports. A TCP or UDP route is a raw resource: a public port of the Pangolin server,
// its claim the port key ("tcp:5432") in place of a host, in the niceId's hash and as
// the name's public host ("tcp:5432 (Service prod/db)"). Its mark is the niceId alone,
// it has one target of site, ip and port, and no access control is read or written for
// it (Pangolin applies none, and refuses the fields). Pangolin accepts several resources
// on one port too: before a create the sink lists the mode's resources, and one on the
// port that is not this owner id's is a HostTakenInPangolin as for a host.
//
// State. The sink keeps in memory what its owner id has in Pangolin, read at start
// (Current waits for the lists and the owner's own resources), every resync period as
// the resource list shows it, and whole every drift period (Refresh says what each
// costs), and kept up to date by its own writes. A failed read makes Current fail until a read succeeds:
// a transient error never deletes. Resources changed behind PIC's back wake their owner;
// at start, every owner found is woken, so that what objects deleted while PIC was down
// published is removed.
//
// Parts. The sink is a few parts, each with its own state and lock. The locks nest one
// way only: the mirror's may be held while the access records' is taken (Current),
// never the reverse.
//   - the mirror (mirror.go), what the owner id has in Pangolin with the org's domains
//     and sites, filled by the refresh (refresh.go) and the sink's own writes, read by
//     Current and Holders (through indexes of the entries by object and by host) and
//     by the writer;
//   - the access records (accessrecords.go), the durable record of what access
//     policies wrote, kept by an AccessRecordStore (record.go, sealed by
//     recordseal.go);
//   - the org's roles and users (orgcache.go), each a list read once for all the
//     workers that need it and kept for a while;
//   - the access planner (accessplan.go), a pure function from what a host's access is
//     to the writes that make it what is asked;
//   - the writer (apply.go; access.go for access, health.go for health checks,
//     routers.go for router names), which works out each Apply's writes and sends them
//     through the steps every path shares (writer.go).
package pangolin
