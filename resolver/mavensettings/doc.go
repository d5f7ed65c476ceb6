// Package mavensettings reads a Maven settings.xml (the one the caller names, and the
// settings Maven itself reads): mirrors, server credentials,
// localRepository and offline, with ${user.home} and ${env.NAME}
// interpolated, and Maven's mirrorOf matching (MirrorFor).
//
// Invariant: Load is a pure function of its arguments (the path, the home
// for ${user.home}, the lookup for ${env.NAME}): it reads no environment
// itself, and its errors carry an errdefs kind and name the file, never a
// password. Profiles, proxies and encrypted passwords are refused or
// ignored as documented on Load; applying mirrors and credentials to a
// repository chain is the resolver's.
package mavensettings
