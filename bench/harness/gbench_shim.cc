// gbench_shim.cc - the only C++ in pcbench: registers the C side's benchmark
// list with Google Benchmark, runs it, and reports back through a JSON
// reporter that also hands each repetition to a C sink.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "impl/pcbench_impl.h"
#include "gbench.h"

namespace {

benchmark::State *S(pcb_gb_state *st)
{
    return reinterpret_cast<benchmark::State *>(st);
}

// The JSON report as Google Benchmark writes it, plus each repetition (not
// the aggregates, which the C side computes from the repetitions) to C.
class Collector : public benchmark::JSONReporter {
  public:
    Collector(const std::map<std::string, int> &index, pcb_gb_sink sink, void *ctx)
        : index_(index), sink_(sink), ctx_(ctx)
    {
    }

    void ReportRuns(const std::vector<Run> &runs) override
    {
        JSONReporter::ReportRuns(runs);
        for (const Run &r : runs) {
            if (r.run_type != Run::RT_Iteration)
                continue;
            auto it = index_.find(r.run_name.function_name);
            if (it == index_.end())
                continue;
            double iters = r.iterations > 0 ? (double)r.iterations : 1.0;
            pcb_gb_sample s;
            s.bench = it->second;
            s.repetition = r.repetition_index;
            s.iterations = r.iterations;
            s.real_s = r.real_accumulated_time / iters;
            s.cpu_s = r.cpu_accumulated_time / iters;
            s.error = r.error_occurred ? r.error_message.c_str() : nullptr;
            sink_(&s, ctx_);
        }
    }

  private:
    const std::map<std::string, int> &index_;
    pcb_gb_sink sink_;
    void *ctx_;
};

bool initialized = false;

void initialize()
{
    if (initialized)
        return;
    // Repetitions of the benchmarks of one run are shuffled together, so the
    // implementations of a configuration alternate instead of running back
    // to back under different machine conditions.
    static char prog[] = "pcbench", interleave[] = "--benchmark_enable_random_interleaving=true";
    static char *argv[] = {prog, interleave, nullptr};
    int argc = 2;
    benchmark::Initialize(&argc, argv);
    initialized = true;
}

} // namespace

extern "C" int pcb_gb_available(void)
{
    return PCB_OK;
}

extern "C" int pcb_gb_run(const pcb_gb_bench *list, int count, pcb_gb_sink sink, void *ctx,
                          char **json)
{
    *json = nullptr;
    try {
        initialize();
        std::map<std::string, int> index;
        for (int i = 0; i < count; i++) {
            const pcb_gb_bench b = list[i];
            if (!index.emplace(b.name, i).second)
                return pcb_fail(PCB_EINVAL, "benchmark name '%s' used twice", b.name);
            auto *reg = benchmark::RegisterBenchmark(
                b.name, [b](benchmark::State &st) { b.fn(reinterpret_cast<pcb_gb_state *>(&st), b.arg); });
            reg->Unit(benchmark::kMillisecond)
                ->Iterations(b.iterations)
                ->Repetitions(b.repetitions)
                ->MeasureProcessCPUTime();
            if (b.clock == PCB_GB_MANUAL)
                reg->UseManualTime();
            else
                reg->UseRealTime();
        }
        std::ostringstream out;
        Collector reporter(index, sink, ctx);
        reporter.SetOutputStream(&out);
        reporter.SetErrorStream(&std::cerr);
        benchmark::RunSpecifiedBenchmarks(&reporter);
        benchmark::ClearRegisteredBenchmarks();
        *json = strdup(out.str().c_str());
        if (!*json)
            return pcb_fail(PCB_ENOMEM, "out of memory for the benchmark report");
        return PCB_OK;
    } catch (const std::exception &e) {
        benchmark::ClearRegisteredBenchmarks();
        return pcb_fail(PCB_ENOMEM, "Google Benchmark: %s", e.what());
    }
}

extern "C" void pcb_gb_shutdown(void)
{
    if (initialized)
        benchmark::Shutdown();
    initialized = false;
}

extern "C" int pcb_gb_keep_running(pcb_gb_state *st)
{
    return S(st)->KeepRunning();
}

extern "C" void pcb_gb_pause(pcb_gb_state *st)
{
    S(st)->PauseTiming();
}

extern "C" void pcb_gb_resume(pcb_gb_state *st)
{
    S(st)->ResumeTiming();
}

extern "C" void pcb_gb_set_iteration_time(pcb_gb_state *st, double seconds)
{
    S(st)->SetIterationTime(seconds);
}

extern "C" void pcb_gb_counter(pcb_gb_state *st, const char *name, double value, int per_second)
{
    S(st)->counters[name] = benchmark::Counter(
        value, per_second ? benchmark::Counter::kIsIterationInvariantRate
                          : benchmark::Counter::kDefaults);
}

extern "C" void pcb_gb_error(pcb_gb_state *st, const char *message)
{
    S(st)->SkipWithError(message);
}
