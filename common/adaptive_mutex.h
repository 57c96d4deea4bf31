// A mutex that spins briefly before it sleeps (glibc's adaptive mutex,
// PTHREAD_MUTEX_ADAPTIVE_NP), for locks held for a few hundred nanoseconds
// by many threads: a waiter then mostly finds it free within its spin
// instead of paying a futex sleep and wake-up (two system calls and a
// context switch) for a wait shorter than either. Not for locks held
// across I/O: spinning there only burns the CPU the holder needs.
// Meets the standard Lockable requirements (std::unique_lock,
// std::lock_guard, std::condition_variable_any).
#pragma once

#include <pthread.h>

namespace sfs {

class AdaptiveMutex {
 public:
  AdaptiveMutex() {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&mutex_, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  ~AdaptiveMutex() { pthread_mutex_destroy(&mutex_); }
  AdaptiveMutex(const AdaptiveMutex&) = delete;
  AdaptiveMutex& operator=(const AdaptiveMutex&) = delete;

  void lock() { pthread_mutex_lock(&mutex_); }
  bool try_lock() { return pthread_mutex_trylock(&mutex_) == 0; }
  void unlock() { pthread_mutex_unlock(&mutex_); }

 private:
  pthread_mutex_t mutex_;
};

}  // namespace sfs
