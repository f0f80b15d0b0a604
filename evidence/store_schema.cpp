#include "evidence/store_schema.hpp"

#include <array>

namespace blaster {
namespace {

constexpr std::array schema_migrations{
    migration{1, R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  command TEXT NOT NULL,
  task TEXT,
  status TEXT NOT NULL,
  device_json TEXT,
  report_sha256 TEXT
);
CREATE TABLE results(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  candidate TEXT NOT NULL,
  variant TEXT NOT NULL,
  case_name TEXT,
  status TEXT NOT NULL,
  reason TEXT,
  time_us REAL,
  speedup REAL,
  bandwidth_gbs REAL,
  roofline_pct REAL,
  source_sha256 TEXT,
  cubin_sha256 TEXT,
  samples_sha256 TEXT,
  detail_json TEXT
);
CREATE INDEX results_run_id ON results(run_id);
)sql"},
    // The fuller record: what ran on which device, what was compiled how, what the gate found,
    // what was measured and what was concluded. Every *_sha256 column names a CAS object that
    // was stored before the row; *_json columns hold valid JSON.
    migration{2, R"sql(
PRAGMA application_id = 1651274612;
CREATE TABLE device_fingerprints(
  id INTEGER PRIMARY KEY,
  fingerprint_sha256 TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  uuid TEXT,
  compute_capability TEXT NOT NULL,
  arch TEXT,
  sm_count INTEGER,
  sm_clock_khz INTEGER,
  memory_clock_khz INTEGER,
  memory_bus_width_bits INTEGER,
  total_memory_bytes INTEGER,
  l2_bytes INTEGER,
  driver_version TEXT,
  cuda_version TEXT,
  nvrtc_version TEXT
);
CREATE TABLE tasks(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  title TEXT,
  spec_sha256 TEXT NOT NULL CHECK(length(spec_sha256) = 64),
  UNIQUE(name, spec_sha256)
);
CREATE TABLE task_cases(
  id INTEGER PRIMARY KEY,
  task_id INTEGER NOT NULL REFERENCES tasks(id),
  name TEXT NOT NULL,
  canonical INTEGER NOT NULL DEFAULT 0,
  shape TEXT,
  symbols_json TEXT CHECK(symbols_json IS NULL OR json_valid(symbols_json)),
  UNIQUE(task_id, name)
);
ALTER TABLE runs ADD COLUMN device_id INTEGER REFERENCES device_fingerprints(id);
ALTER TABLE runs ADD COLUMN task_id INTEGER REFERENCES tasks(id);
CREATE INDEX runs_task ON runs(task);
CREATE TABLE sources(
  id INTEGER PRIMARY KEY,
  sha256 TEXT NOT NULL CHECK(length(sha256) = 64),
  file_name TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  UNIQUE(sha256, file_name)
);
CREATE TABLE compilations(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  source_id INTEGER NOT NULL REFERENCES sources(id),
  candidate TEXT NOT NULL,
  variant TEXT NOT NULL,
  arch TEXT NOT NULL,
  options_json TEXT NOT NULL CHECK(json_valid(options_json)),
  nvrtc_version TEXT,
  succeeded INTEGER NOT NULL,
  log_sha256 TEXT CHECK(log_sha256 IS NULL OR length(log_sha256) = 64),
  cubin_sha256 TEXT CHECK(cubin_sha256 IS NULL OR length(cubin_sha256) = 64),
  compile_ms REAL,
  cache_hit INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX compilations_run_id ON compilations(run_id);
CREATE TABLE compiled_kernels(
  id INTEGER PRIMARY KEY,
  compilation_id INTEGER NOT NULL REFERENCES compilations(id),
  kernel TEXT NOT NULL,
  registers INTEGER,
  stack_bytes INTEGER,
  spill_store_bytes INTEGER,
  spill_load_bytes INTEGER,
  shared_bytes INTEGER,
  barriers INTEGER
);
CREATE INDEX compiled_kernels_compilation_id ON compiled_kernels(compilation_id);
CREATE TABLE gate_results(
  id INTEGER PRIMARY KEY,
  compilation_id INTEGER NOT NULL REFERENCES compilations(id),
  case_name TEXT NOT NULL,
  seed TEXT NOT NULL,
  passed INTEGER NOT NULL,
  reason TEXT,
  message TEXT,
  max_abs_error REAL,
  max_rel_error REAL,
  mismatches INTEGER,
  nonfinite INTEGER,
  unwritten INTEGER,
  metrics_json TEXT CHECK(metrics_json IS NULL OR json_valid(metrics_json)),
  evidence_sha256 TEXT CHECK(evidence_sha256 IS NULL OR length(evidence_sha256) = 64)
);
CREATE INDEX gate_results_compilation_id ON gate_results(compilation_id);
CREATE TABLE measurements(
  id INTEGER PRIMARY KEY,
  compilation_id INTEGER NOT NULL REFERENCES compilations(id),
  case_name TEXT NOT NULL,
  mode TEXT NOT NULL,
  protocol_json TEXT NOT NULL CHECK(json_valid(protocol_json)),
  samples_sha256 TEXT NOT NULL CHECK(length(samples_sha256) = 64),
  sample_count INTEGER NOT NULL,
  median_us REAL NOT NULL,
  mean_us REAL,
  min_us REAL,
  max_us REAL,
  stdrel REAL,
  statistics_json TEXT CHECK(statistics_json IS NULL OR json_valid(statistics_json))
);
CREATE INDEX measurements_compilation_id ON measurements(compilation_id);
CREATE TABLE verdicts(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  measurement_id INTEGER NOT NULL REFERENCES measurements(id),
  baseline_measurement_id INTEGER REFERENCES measurements(id),
  verdict TEXT NOT NULL,
  speedup REAL,
  speedup_ci_low REAL,
  speedup_ci_high REAL,
  detail_json TEXT CHECK(detail_json IS NULL OR json_valid(detail_json))
);
CREATE INDEX verdicts_run_id ON verdicts(run_id);
CREATE TABLE artifacts(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  sha256 TEXT NOT NULL CHECK(length(sha256) = 64),
  media_type TEXT,
  UNIQUE(run_id, name)
);
)sql"},
    // The process that runs a run ("host pid start-ticks"), so that a run whose process is gone
    // can be told from one still going, and marked interrupted.
    migration{3, R"sql(
ALTER TABLE runs ADD COLUMN owner TEXT;
)sql"},
    // One record per run: what each variant came to is a row of variant_results, citing its
    // compilation and measurement, with its quantities as variant_metrics rows by the metric's
    // tag. The results table of versions 1 to 3 becomes a view over them; its rows move over with
    // every value (digests a compilation or measurement already cites are read from there).
    migration{4, R"sql(
CREATE TABLE variant_results(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  compilation_id INTEGER REFERENCES compilations(id),
  measurement_id INTEGER REFERENCES measurements(id),
  candidate TEXT NOT NULL,
  variant TEXT NOT NULL,
  file_name TEXT,
  baseline INTEGER NOT NULL DEFAULT 0,
  case_name TEXT,
  status TEXT NOT NULL,
  reason TEXT,
  message TEXT,
  params_json TEXT CHECK(params_json IS NULL OR json_valid(params_json)),
  source_sha256 TEXT CHECK(source_sha256 IS NULL OR length(source_sha256) = 64),
  cubin_sha256 TEXT CHECK(cubin_sha256 IS NULL OR length(cubin_sha256) = 64),
  samples_sha256 TEXT CHECK(samples_sha256 IS NULL OR length(samples_sha256) = 64),
  detail_json TEXT CHECK(detail_json IS NULL OR json_valid(detail_json))
);
CREATE INDEX variant_results_run_id ON variant_results(run_id);
CREATE TABLE variant_metrics(
  id INTEGER PRIMARY KEY,
  variant_result_id INTEGER NOT NULL REFERENCES variant_results(id),
  tag TEXT NOT NULL,
  value REAL NOT NULL,
  UNIQUE(variant_result_id, tag)
);
CREATE INDEX variant_metrics_variant_result_id ON variant_metrics(variant_result_id);
-- What each tag means, as the harness that recorded it described it: tables and reports of the
-- store are rendered from these, so a new metric shows in them once it is recorded.
CREATE TABLE metric_definitions(
  id INTEGER PRIMARY KEY,
  tag TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  unit TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  format TEXT NOT NULL DEFAULT '',
  console INTEGER NOT NULL DEFAULT 0
);
INSERT INTO metric_definitions(tag, name, unit, description, format, console) VALUES
  ('time_us', 'time us', 'us', 'the median of the session medians, per launch', '{:.2f}', 1),
  ('speedup', 'speedup', 'x', 'the baseline''s time over this one, in the same run', '{:.2f}x', 1),
  ('bandwidth_gbs', 'GB/s', 'GB/s', 'the task''s roofline bytes over the time', '{:.1f}', 1),
  ('copy_bandwidth_pct', '% copy BW', '%',
   'GB/s against the device''s measured copy bandwidth', '{:.1f}%', 1);
INSERT INTO variant_results(id, run_id, compilation_id, measurement_id, candidate, variant,
                            case_name, status, reason, message, params_json, source_sha256,
                            cubin_sha256, samples_sha256, detail_json)
  SELECT x.id, x.run_id,
         (SELECT c.id FROM compilations c
          WHERE c.run_id = x.run_id AND c.candidate = x.candidate AND c.variant = x.variant
          ORDER BY c.id LIMIT 1),
         (SELECT m.id FROM measurements m JOIN compilations c ON c.id = m.compilation_id
          WHERE c.run_id = x.run_id AND c.candidate = x.candidate AND c.variant = x.variant
          ORDER BY m.id LIMIT 1),
         x.candidate, x.variant, x.case_name, x.status, x.reason,
         CASE WHEN json_valid(x.detail_json) THEN json_extract(x.detail_json, '$.message') END,
         CASE WHEN json_valid(x.detail_json) AND json_type(x.detail_json, '$.params') = 'object'
              THEN json_extract(x.detail_json, '$.params') END,
         x.source_sha256, x.cubin_sha256, x.samples_sha256, x.detail_json
  FROM results x;
UPDATE variant_results SET source_sha256 = NULL
  WHERE source_sha256 = (SELECT s.sha256 FROM compilations c JOIN sources s ON s.id = c.source_id
                         WHERE c.id = variant_results.compilation_id);
UPDATE variant_results SET cubin_sha256 = NULL
  WHERE cubin_sha256 = (SELECT c.cubin_sha256 FROM compilations c
                        WHERE c.id = variant_results.compilation_id);
UPDATE variant_results SET samples_sha256 = NULL
  WHERE samples_sha256 = (SELECT m.samples_sha256 FROM measurements m
                          WHERE m.id = variant_results.measurement_id);
INSERT INTO variant_metrics(variant_result_id, tag, value)
  SELECT id, 'time_us', time_us FROM results WHERE time_us IS NOT NULL
  UNION ALL SELECT id, 'speedup', speedup FROM results WHERE speedup IS NOT NULL
  UNION ALL SELECT id, 'bandwidth_gbs', bandwidth_gbs FROM results WHERE bandwidth_gbs IS NOT NULL
  UNION ALL SELECT id, 'copy_bandwidth_pct', roofline_pct FROM results
            WHERE roofline_pct IS NOT NULL;
DROP INDEX results_run_id;
DROP TABLE results;
CREATE VIEW results AS
  SELECT v.id, v.run_id, v.candidate, v.variant, v.case_name, v.status, v.reason, v.message,
         v.baseline,
         (SELECT value FROM variant_metrics WHERE variant_result_id = v.id AND tag = 'time_us')
           AS time_us,
         (SELECT value FROM variant_metrics WHERE variant_result_id = v.id AND tag = 'speedup')
           AS speedup,
         (SELECT value FROM variant_metrics
          WHERE variant_result_id = v.id AND tag = 'bandwidth_gbs') AS bandwidth_gbs,
         (SELECT value FROM variant_metrics
          WHERE variant_result_id = v.id AND tag = 'copy_bandwidth_pct') AS copy_bandwidth_pct,
         COALESCE(v.source_sha256,
                  (SELECT s.sha256 FROM compilations c JOIN sources s ON s.id = c.source_id
                   WHERE c.id = v.compilation_id)) AS source_sha256,
         COALESCE(v.cubin_sha256,
                  (SELECT c.cubin_sha256 FROM compilations c WHERE c.id = v.compilation_id))
           AS cubin_sha256,
         COALESCE(v.samples_sha256,
                  (SELECT m.samples_sha256 FROM measurements m WHERE m.id = v.measurement_id))
           AS samples_sha256,
         v.detail_json
  FROM variant_results v;
)sql"},
    // The hardware counters of a variant: diagnostics beside its measurement, never used to
    // judge it. The counters themselves, kernel by kernel, and Nsight Compute's report live in
    // the CAS.
    migration{5, R"sql(
CREATE TABLE variant_diagnostics(
  id INTEGER PRIMARY KEY,
  variant_result_id INTEGER NOT NULL UNIQUE REFERENCES variant_results(id),
  bound TEXT,
  diagnosis TEXT,
  unavailable TEXT,
  profile_sha256 TEXT NOT NULL CHECK(length(profile_sha256) = 64),
  ncu_report_sha256 TEXT CHECK(ncu_report_sha256 IS NULL OR length(ncu_report_sha256) = 64)
);
)sql"},
    // The optimization memory: every step of an optimize run (or a served evaluation), what the
    // proposer said it tried and what came of it. `status` is the trajectory's (ok, compileerror,
    // wrongresult), `reason` blaster's finer one; the bench run that judged the step holds the
    // evidence. The proposer's reply and the source live in the CAS.
    migration{6, R"sql(
CREATE TABLE optimize_steps(
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  step INTEGER NOT NULL,
  parent_step INTEGER,
  task TEXT NOT NULL,
  case_name TEXT,
  hypothesis TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL DEFAULT '',
  tags_json TEXT NOT NULL DEFAULT '[]' CHECK(json_valid(tags_json)),
  status TEXT NOT NULL,
  reason TEXT,
  message TEXT,
  variant TEXT,
  params_json TEXT CHECK(params_json IS NULL OR json_valid(params_json)),
  time_us REAL,
  baseline_us REAL,
  speedup REAL,
  speedup_low REAL,
  speedup_high REAL,
  reward REAL NOT NULL DEFAULT 0,
  diagnosis TEXT,
  kept INTEGER NOT NULL DEFAULT 0,
  at_s REAL NOT NULL,
  elapsed_s REAL NOT NULL,
  bench_run_id INTEGER REFERENCES runs(id),
  source_sha256 TEXT CHECK(source_sha256 IS NULL OR length(source_sha256) = 64),
  reply_sha256 TEXT CHECK(reply_sha256 IS NULL OR length(reply_sha256) = 64),
  UNIQUE(run_id, step)
);
CREATE INDEX optimize_steps_task ON optimize_steps(task);
)sql"},
    // Steps as exact transcripts, judged under one reward protocol: the request line blaster
    // wrote for the step (the reply answers it), the compile log and the line it blames as the
    // proposer was told them, the roofline, the timing sessions the reply asked for and those
    // the reward is drawn from.
    migration{7, R"sql(
ALTER TABLE optimize_steps ADD COLUMN request_sha256 TEXT
  CHECK(request_sha256 IS NULL OR length(request_sha256) = 64);
ALTER TABLE optimize_steps ADD COLUMN log TEXT;
ALTER TABLE optimize_steps ADD COLUMN error_line INTEGER;
ALTER TABLE optimize_steps ADD COLUMN roofline_pct REAL;
ALTER TABLE optimize_steps ADD COLUMN sessions INTEGER;
ALTER TABLE optimize_steps ADD COLUMN reward_sessions INTEGER;
)sql"},
    // The answer line blaster wrote back to a served request (serve, eval), as written: the
    // other half of a served step's transcript.
    migration{8, R"sql(
ALTER TABLE optimize_steps ADD COLUMN answer_sha256 TEXT
  CHECK(answer_sha256 IS NULL OR length(answer_sha256) = 64);
)sql"},
    // The memory's keys: the short model of the GPU the step ran on, what bounded its kernel,
    // and the bound of the kernel it set out to improve. Steps recorded before have the model of
    // the GPU their judging run names and the bound their diagnosis begins with; the bound they
    // improved was never recorded and stays unknown (NULL). The memory reads a device's name as
    // its model ("NVIDIA H100 80GB HBM3" as "H100").
    migration{9, R"sql(
ALTER TABLE optimize_steps ADD COLUMN gpu TEXT;
ALTER TABLE optimize_steps ADD COLUMN bound TEXT;
ALTER TABLE optimize_steps ADD COLUMN improved_bound TEXT;
UPDATE optimize_steps SET gpu = (
  SELECT json_extract(r.device_json, '$.name') FROM runs r
  WHERE r.id = optimize_steps.bench_run_id AND json_valid(r.device_json))
WHERE bench_run_id IS NOT NULL;
UPDATE optimize_steps SET bound = CASE
  WHEN diagnosis LIKE 'bandwidth-bound%' THEN 'bandwidth-bound'
  WHEN diagnosis LIKE 'compute-bound%' THEN 'compute-bound'
  WHEN diagnosis LIKE 'latency-bound%' THEN 'latency-bound'
  WHEN diagnosis LIKE 'launch-bound%' THEN 'launch-bound'
  WHEN status = 'ok' THEN 'unknown' END;
CREATE INDEX optimize_steps_gpu ON optimize_steps(task, gpu);
)sql"},
};

}  // namespace

std::span<const migration> store_schema() { return schema_migrations; }

}  // namespace blaster
