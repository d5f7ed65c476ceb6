// Package ivysettings reads spark.jars.ivySettings, an Apache Ivy settings
// file, as Spark 3.x/4.x reads it (Ivy 2.5's XmlSettingsParser), into a
// plain model: the resolvers by name, the default resolver, their
// patterns and the <credentials>.
//
// Invariant: a load is bounded whatever the file holds (MaxFileSize per
// file, includes, variable expansion steps, bytes and depth, resolvers),
// and anything that could change a resolution which the model cannot
// express is an error naming the element (errdefs.Invalid), never ignored.
// The package reads files and the environment only through Load's
// arguments; building a repository chain from Settings is the resolver's.
package ivysettings
