#include "core/StopSignals.hpp"

#include <atomic>
#include <csignal>
#include <ctime>

namespace optistep {
namespace {

static_assert(std::atomic<int>::is_always_lock_free && std::atomic<long long>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

std::atomic<int> g_signal{0};           ///< SIGTERM once it came, else SIGUSR1 once it came
std::atomic<long long> g_term_ns{0};    ///< CLOCK_MONOTONIC of the first SIGTERM, 0 if none
bool g_watching = false;                ///< a StopSignals exists
long long g_half_grace_ns = 0;
bool g_abandoning = false;              ///< agreed by StepMustBeAbandoned
struct sigaction g_previous_term {};
struct sigaction g_previous_usr1 {};

long long MonotonicNanoseconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec;
}

extern "C" void RecordStopSignal(int signal) {
  if (signal == SIGTERM) {
    long long none = 0;
    g_term_ns.compare_exchange_strong(none, MonotonicNanoseconds());
    g_signal = SIGTERM;
  } else {
    int none = 0;
    g_signal.compare_exchange_strong(none, signal);
  }
}

}  // namespace

StopSignals::StopSignals(double grace) {
  g_watching = true;
  g_half_grace_ns = static_cast<long long>(grace * 0.5e9);
  struct sigaction action {};
  action.sa_handler = RecordStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a signal must not fail a system call in MPI or HDF5
  sigaction(SIGTERM, &action, &g_previous_term);
  sigaction(SIGUSR1, &action, &g_previous_usr1);
}

StopSignals::~StopSignals() {
  sigaction(SIGTERM, &g_previous_term, nullptr);
  sigaction(SIGUSR1, &g_previous_usr1, nullptr);
  g_watching = false;
  g_abandoning = false;
  g_signal = 0;
  g_term_ns = 0;
}

int StopSignals::Received() { return g_signal; }

bool StopSignals::StepMustBeAbandoned(MPI_Comm comm) {
  if (!g_watching) return false;
  if (g_abandoning) return true;
  const long long term = g_term_ns;
  int due = term != 0 && MonotonicNanoseconds() - term >= g_half_grace_ns ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &due, 1, MPI_INT, MPI_MAX, comm);
  g_abandoning = due != 0;
  return g_abandoning;
}

bool StopSignals::Abandoning() { return g_abandoning; }

const char* StopSignals::Name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    default: return "a signal";
  }
}

}  // namespace optistep
