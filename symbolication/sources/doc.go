// Package sources finds the artifacts of every kind of symbolication:
// it is where a resolver's files come from, apart from parsing them
// (the kinds' packages) and from remembering them (symbolication.Cache).
//
//   - OpenRegular and ReadRegular read a file only when it is a regular
//     file within a size bound, opened without blocking (never a FIFO);
//   - Roots are the configured directories by their real paths, with the
//     walk of their files (links followed only within them);
//   - Scans keeps a kind's index of its directories and makes new ones in
//     the background; Find is the one rescan-on-a-miss rule of every kind,
//     at most one scan per interval;
//   - SourceMaps finds JavaScript source maps by debug id and by the
//     bundle's URL; ProGuardMappings finds ProGuard/R8 mappings by UUID;
//   - DebugFiles finds native debug files by build id: the
//     `.build-id/xx/rest.debug` layout and the files of the directories;
//     Debuginfod fetches them from debuginfod servers.
package sources
