// Which series of a resource figure (resource_probes.hpp) each reader takes, named once: the label
// values the scorer, the datasheet stand-in (--target-gpus), the expected-value grades, the
// scorecard and the report's charts select. A probe's label values are declared in its figures.cpp
// (results/SCHEMA.md); a selector that names one the probe no longer records finds nothing, and
// the figure is then `not measured`.
#pragma once

#include "harness/score/result_view.hpp"

namespace nodeaudit::score::label_selector {

// gpu.memory-bandwidth: the copy kernel (one read and one write per element), the figure datasheets'
// and published measurements' memory bandwidth compares with.
inline const LabelFilter copy_kernel{{"kernel", "copy"}};
// gpu.pcie h2d_bandwidth: pinned host memory with every GPU copying at once, as a step's batches go.
inline const LabelFilter pinned_all_gpus_at_once{{"memory", "pinned"}, {"mode", "concurrent"}};
// ... one GPU at a time: what published figures measure, and the scorer's fallback.
inline const LabelFilter pinned_one_gpu_at_a_time{{"memory", "pinned"}, {"mode", "single"}};
// storage.read: sequential reads, as shards are streamed.
inline const LabelFilter sequential_read{{"pattern", "seq"}};
// storage.dataset: windows of one memory-mapped file (--read mmap), or whole files read (no `read`
// label: "" matches a metric without it).
inline const LabelFilter memory_mapped_windows{{"read", "mmap"}};
inline const LabelFilter whole_files_read{{"read", ""}};
// storage.dataset cache_fill_per_sample: mapped windows read from a cold page cache.
inline const LabelFilter memory_mapped_windows_cold{{"read", "mmap"}, {"cache", "none"}};
// host.decode: decode and augmentation together, a training sample's whole CPU work.
inline const LabelFilter full_decode_stage{{"stage", "full"}};
// host.dataloader: the DataLoader training scripts run (torchvision's ImageNet recipe decodes with PIL).
inline const LabelFilter pil_decoder{{"decoder", "pil"}};

// The selector with one more label: a GPU's index for a metric written in a probe's place.
inline LabelFilter with_label(LabelFilter selector, const std::string& key, const std::string& value) {
  selector[key] = value;
  return selector;
}

}  // namespace nodeaudit::score::label_selector
