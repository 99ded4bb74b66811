#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace drover::core {

// Most hosts one bracket range, or one whole expression, may expand to. Slurm refuses ranges
// above 64Ki hosts; the total cap keeps a hostile expression from exhausting memory.
inline constexpr std::size_t kMaxHostsPerRange = 64 * 1024;
inline constexpr std::size_t kMaxHostsPerExpr = 1024 * 1024;

// Expands a Slurm hostlist expression into host names, in the order written (duplicates kept,
// as Slurm does): "node[1-3,05],gpu1" -> node1 node2 node3 node05 gpu1. Items are separated by
// commas or whitespace; empty items are skipped. Several bracket groups in one name expand as a
// cartesian product, leftmost group outermost ("r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2); text after
// a bracket group is kept ("a[01-02]b" -> a01b a02b; real Slurm 22.05 rejects that one). Numbers
// are zero-padded to the width of the range's low bound ("n[01-10]" -> n01..n10).
// Throws ParseError("Invalid hostlist: <expr>") for reversed or non-numeric ranges, empty range
// items, unbalanced brackets and oversized ranges.
std::vector<std::string> expand_hostlist(std::string_view expr);

// Compresses host names into Slurm's ranged form, sorted (by prefix, then number) and with
// duplicates removed: {"node3","node1","node2","gpu1"} -> "gpu1,node[1-3]". Only a trailing
// number is ranged. Zero padding is kept ("n01","n02" -> "n[01-02]") and numbers written with
// different widths are not merged ("n1","n01" -> "n[1,01]"), but unpadded numbers that grow a
// digit are ("n9","n10" -> "n[9-10]").
std::string compress_hostlist(const std::vector<std::string>& names);

// The ranged form as `scontrol show hostlist` writes it: names in the order given (or sorted),
// duplicates kept, a range only over numbers that follow each other in that order
// ({"a1","a2","a4","a3"} -> "a[1-2,4,3]"; sorted {"a1","a2","a2","a3"} -> "a[1-2,2-3]").
std::string ranged_hostlist(const std::vector<std::string>& names, bool sorted);

}  // namespace drover::core
