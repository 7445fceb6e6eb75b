// Fleet mode (docs/fleet.md): a preset that selects the few entries which tell a healthy GPU from a
// slow or faulty one, and the launcher glue that runs one gpuprobe per GPU under mpirun or srun.
//
// The preset is declared once, here (fleet.cpp): for each figure the family, the axis values of its
// entry, which entry of a sweep it takes, the counter it reads and how far from its model's median a
// GPU may be before that counts as a fault. The binary selects the entries from it (--preset=fleet),
// writes the declaration into the result file's context (gpuprobe_preset) and prints it
// (--list-presets); `gpuprobe-analyze fleet` reads its figures from there, nothing else.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gpuprobe {

// Whether the ranks of one node measure a figure at once or in turns (docs/fleet.md): at once where
// the load of all GPUs together is the point (each GPU's own memory and pipelines, with the node's
// power and heat as in production); in turns where GPUs share the path being measured (PCIe switches
// and host memory for host transfers, NVLink/NVSwitch ports for peer copies).
enum class FleetPhase { kTogether, kApart };

struct PresetFigure {
  std::string figure;  // "DRAM read"
  std::string family;
  // Axis values of the entry; "<device>" stands for the measured GPU's index (peer copies from it).
  std::vector<std::pair<std::string, std::string>> axes;
  // Which entry of those matching: the largest ("max") or smallest ("min") value of pick_axis, or all
  // of them with the figure the worst over pick_axis ("worst", e.g. the slowest neighbour), or all of
  // them with the figure the level ceiling the report derives from them ("ceiling": its premise rules
  // and plateau, analysis ceilings.py, spelled there only). Empty pick_axis: the axes name one entry.
  std::string pick_axis;
  std::string take;
  std::string field = "value_median";  // value_median or a Measurement counter (measured_fields())
  // How much worse than its model's median a GPU may be (percent) before it is flagged: the figure's
  // expected GPU-to-GPU spread, wide for what the host shares (launches, transfers).
  double tolerance_pct = 5;
  FleetPhase phase = FleetPhase::kTogether;
  // An optional figure is left out where its family is not declared by this binary (the hook for
  // probes that are not built everywhere, e.g. the tensor-core peaks once they exist); a required
  // one whose family is missing is a declaration error (preset_problems).
  bool optional = false;
};

struct Preset {
  std::string name;
  std::string description;
  std::vector<PresetFigure> figures;  // only those this binary can measure
};

// Every preset, its optional figures without a declared family left out.
const std::vector<Preset>& presets();
const Preset* find_preset(const std::string& name);  // nullptr if none
std::string preset_names();                         // "fleet" (for messages)

// What is wrong with the declarations, one line each (none: every family declared, every axis and
// pick axis one of its record's, every field value_median or a known counter, take max/min/worst/ceiling).
std::vector<std::string> preset_problems();

// The registered instance names (Context::entry_instances) the preset selects on GPU `device`, in
// registration order. Throws UsageError when a required figure matches no entry (e.g. a
// --max-footprint or --exclude that removed it).
std::vector<std::string> preset_selection(const Preset& preset, const std::vector<std::string>& instances,
                                          int device);
// Which of the selected instances run in turns (FleetPhase::kApart).
std::vector<std::string> preset_apart(const Preset& preset, const std::vector<std::string>& selected, int device);
// The Google Benchmark filter that selects exactly these instance names.
std::string exact_filter(const std::vector<std::string>& instances);

// The declaration as one compact JSON object (the context key gpuprobe_preset), unit and direction
// derived from the family records; all presets as a JSON array (--list-presets).
std::string preset_json(const Preset& preset);
std::string presets_json();
constexpr const char* kPresetContextKey = "gpuprobe_preset";

// The counters every Measurement writes that a preset figure may read besides value_median, with
// their unit and direction: (name, unit, higher is better).
struct MeasuredField {
  const char* name;
  const char* unit;
  bool higher_is_better;
};
const std::vector<MeasuredField>& measured_fields();

// One process per GPU: the launcher's ranks (--device=local-rank).
struct RankInfo {
  int rank = 0;            // global: names the result file
  int local_rank = 0;      // on this node: picks the GPU
  int local_size = 1;      // processes on this node (1 when only environment variables say)
  std::string source;      // where they came from, e.g. "SLURM_PROCID/SLURM_LOCALID" or "MPI"
  bool mpi = false;        // MPI is initialized: barriers and turns (fleet_sync)
};

// The ranks from the launcher's environment variables: global from SLURM_PROCID,
// OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK; node-local from SLURM_LOCALID,
// OMPI_COMM_WORLD_LOCAL_RANK or MPI_LOCALRANKID, else (PMI_RANK alone) the global rank. Throws
// UsageError when none is set. `env` reads a variable (getenv; a map in tests).
RankInfo rank_from_environment(const std::function<const char*(const char*)>& env);
// "OUT.json" -> "OUT.rank3.json"; any other name gets ".rank3" appended.
std::string rank_file_name(const std::string& out, int rank);

// With MPI built in (GPUPROBE_HAVE_MPI) and an MPI launcher's variables present: MPI_Init, the ranks
// from MPI (node-local ones by MPI_Comm_split_type), else rank_from_environment. finalize: after the
// run (the turns' remaining barriers, MPI_Finalize).
RankInfo fleet_init_ranks(int* argc, char*** argv);
void fleet_barrier_all();  // every rank starts measuring together (no-op without MPI)
// Installed as Context::before_entry: at the first entry that runs in turns, the ranks of the node
// wait for the ranks before them to finish theirs (no-op without MPI).
void fleet_before_entry(const std::string& instance_name);
void fleet_set_apart(std::vector<std::string> apart_instances);
void fleet_finalize();

}  // namespace gpuprobe
