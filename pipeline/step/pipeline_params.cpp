// pipeline.step's parameters, with the help text `probe pipeline.step --help` prints.
#include "harness/core/units.hpp"
#include "io/storage_params.hpp"
#include "pipeline/step/pipeline_run.hpp"

namespace nodeaudit::pipeline {

std::vector<ParamSpec> pipeline_params() {
  using P = ParamSpec;
  return {
      P{.name = "workload",
        .type = ParamType::text,
        .default_by_level = same_at_all_levels(""),
        .help = "Workload profile NAME or FILE (--profile is the run-wide option); empty = the run's --profile, else "
                "cv-resnet50-imagenet"},
      io::path_param("Directory to create the sample files in (on the storage under test); empty = --data-dir"),
      P{.name = "steps",
        .type = ParamType::integer,
        .default_by_level = same_at_all_levels("0"),
        .help = "Training steps to run (the first is not timed); 0 = as many as --step-budget holds at the step's "
                "compute time, at least 4 and at most 20 / 200 / 2000 (quick / standard / soak). At the quick "
                "level the timed steps are a total over the rounds: each round runs its share after its own "
                "untimed first step",
        .min = 0,
        .max = 10'000'000},
      P{.name = "step-budget",
        .type = ParamType::duration,
        .default_by_level = {"6s", "60s", "600s"},
        .help = "Compute time the timed steps may take in all when --steps is 0: a slow profile runs fewer, "
                "longer steps, a fast one up to the level's step count",
        .min = 0.001,
        .max = 86400},
      P{.name = "workers",
        .type = ParamType::integer,
        .default_by_level = same_at_all_levels("4"),
        .help = "Loader worker threads per GPU (a DataLoader's num_workers in each GPU's process), one io_uring each",
        .min = 1,
        .max = 256},
      P{.name = "queue-depth",
        .type = ParamType::integer,
        .default_by_level = same_at_all_levels("0"),
        .help = "Batches in the prefetch queue (all GPUs); 0 = 2 per worker (PyTorch DataLoader's prefetch_factor 2)",
        .min = 0,
        .max = 4096},
      P{.name = "io-depth",
        .type = ParamType::integer,
        .default_by_level = same_at_all_levels("8"),
        .help = "Sample reads in flight per loader worker",
        .min = 1,
        .max = 4096},
      P{.name = "emulate-compute",
        .type = ParamType::text,
        .default_by_level = same_at_all_levels("auto"),
        .help = "auto = the node's GPUs (the run-wide --gpus) when CUDA sees one, else h100 emulated; a GPU whose "
                "compute and all-reduce are emulated as sleeps: " +
                accepted_gpu_names() + "; none = loader only (compute 0, no all-reduce)"},
      P{.name = "compute-time",
        .type = ParamType::duration,
        .default_by_level = same_at_all_levels("0s"),
        .help = "Emulated compute time per step (emulates even where a GPU exists); 0 = derived from the profile for "
                "the emulated GPU",
        .min = 0,
        .max = 3600},
      P{.name = "batch-size",
        .type = ParamType::integer,
        .default_by_level = same_at_all_levels("0"),
        .help = "Samples per step; 0 = the profile's micro-batch x gradient accumulation",
        .min = 0,
        .max = 1'000'000},
      P{.name = "sample-size",
        .type = ParamType::size,
        .default_by_level = same_at_all_levels("0"),
        .help = "Bytes per sample file; 0 = the profile's data.sample_size",
        .min = 0,
        .max = 64 << 20},
      P{.name = "samples",
        .type = ParamType::integer,
        .default_by_level = {"2000", "20000", "100000"},
        .help = "Sample files in the data set",
        .min = 1,
        .max = 10'000'000},
      P{.name = "direct",
        .type = ParamType::boolean,
        .default_by_level = same_at_all_levels("false"),
        .help = "O_DIRECT reads (the storage without the page cache); false = buffered, as a PyTorch DataLoader reads"},
      P{.name = "decode",
        .type = ParamType::choice,
        .default_by_level = same_at_all_levels("auto"),
        .help = "JPEG samples decoded + augmented by the loader: auto = when the profile's data.decode is jpeg",
        .choices = {"auto", "jpeg", "none"}},
      P{.name = "loader",
        .type = ParamType::choice,
        .default_by_level = same_at_all_levels("native"),
        .help = "native = this process's io_uring workers (decode with host.decode's code); pytorch = a real PyTorch "
                "DataLoader in --python (PIL decode + torchvision transforms, or raw files as tensors) with compute "
                "emulated there as sleeps, no checkpoints",
        .choices = {"native", "pytorch"}},
      P{.name = "python",
        .type = ParamType::text,
        .default_by_level = same_at_all_levels("python3"),
        .help = "With --loader pytorch: the Python the training uses (a path, or a name on PATH); it must import torch "
                "and torchvision"},
      P{.name = "checkpoint",
        .type = ParamType::choice,
        .default_by_level = same_at_all_levels("sync"),
        .help = "Checkpoint saves: sync (the step waits for write + fdatasync), async (a writer thread; the step "
                "waits only for the previous save), off",
        .choices = {"sync", "async", "off"}},
      P{.name = "gpus-in-node",
        .type = ParamType::integer,
        .default_by_level = same_at_all_levels("8"),
        .help = "GPUs of the emulated node, for the gradient all-reduce (1 = none); on real GPUs, the --gpus chosen",
        .min = 1,
        .max = 4096},
      P{.name = "busbw",
        .type = ParamType::real,
        .default_by_level = same_at_all_levels("0"),
        .help = "All-reduce bus bandwidth in GB/s; 0 = from --comm-result, else measured on real GPUs, else the emulated "
                "GPU's all-reduce busbw in the GPU table at the gradient size (datasheet, not measured)",
        .min = 0,
        .max = 100000},
      P{.name = "comm-result",
        .type = ParamType::text,
        .default_by_level = same_at_all_levels(""),
        .help = "Result FILE with a measured comm.allreduce busbw (the size nearest the gradient bytes is used)"},
  };
}

}  // namespace nodeaudit::pipeline
