// The richards program of benches/thinlto_parity.py: Martin Richards's
// benchmark, the simulation of an operating system's task scheduler, in
// its object-oriented form: the scheduler runs task control blocks, each
// of which runs its task (idle, worker, two handlers, two devices) through
// the virtual Task::run, the tasks passing packets to one another.
#pragma once
#include <memory>
#include <vector>

namespace richards {

enum TaskId { ID_IDLE = 0, ID_WORKER = 1, ID_HANDLER_A = 2, ID_HANDLER_B = 3, ID_DEVICE_A = 4, ID_DEVICE_B = 5, NUMBER_OF_IDS = 6 };
enum PacketKind { KIND_DEVICE = 0, KIND_WORK = 1 };
const int DATA_SIZE = 4;

struct Packet {
  Packet *link;
  int id;
  int kind;
  int a1 = 0;
  int a2[DATA_SIZE] = {0, 0, 0, 0};
  Packet(Packet *l, int i, int k) : link(l), id(i), kind(k) {}
  // Appends this packet to the end of queue (null: empty); the queue.
  Packet *add_to(Packet *queue);
};

class Scheduler;
class TaskControlBlock;

class Task {
protected:
  Scheduler &scheduler;
public:
  explicit Task(Scheduler &s) : scheduler(s) {}
  virtual ~Task();
  // Runs the task on a packet (or none); the control block to run next.
  virtual TaskControlBlock *run(Packet *packet) = 0;
};

class IdleTask : public Task {
  int v1;
  int count;
public:
  IdleTask(Scheduler &s, int v, int c) : Task(s), v1(v), count(c) {}
  TaskControlBlock *run(Packet *packet) override;
};

class WorkerTask : public Task {
  int v1;
  int v2;
public:
  WorkerTask(Scheduler &s, int a, int b) : Task(s), v1(a), v2(b) {}
  TaskControlBlock *run(Packet *packet) override;
};

class HandlerTask : public Task {
  Packet *work = nullptr;   // work packets queued
  Packet *devices = nullptr; // device packets queued
public:
  explicit HandlerTask(Scheduler &s) : Task(s) {}
  TaskControlBlock *run(Packet *packet) override;
};

class DeviceTask : public Task {
  Packet *pending = nullptr;
public:
  explicit DeviceTask(Scheduler &s) : Task(s) {}
  TaskControlBlock *run(Packet *packet) override;
};

class TaskControlBlock {
  enum : int { RUNNING = 0, RUNNABLE = 1, SUSPENDED = 2, HELD = 4, SUSPENDED_RUNNABLE = SUSPENDED | RUNNABLE };
  int state;
public:
  TaskControlBlock *link;
  int id;
  int priority;
  Packet *queue;
  std::unique_ptr<Task> task;

  TaskControlBlock(TaskControlBlock *l, int i, int p, Packet *q, std::unique_ptr<Task> t);
  void set_running() { state = RUNNING; }
  void mark_as_not_held() { state &= ~HELD; }
  void mark_as_held() { state |= HELD; }
  bool is_held_or_suspended() const { return (state & HELD) != 0 || state == SUSPENDED; }
  void mark_as_suspended() { state |= SUSPENDED; }
  void mark_as_runnable() { state |= RUNNABLE; }
  // Takes the first queued packet, if the task is runnable, and runs the task on it.
  TaskControlBlock *run();
  // Queues packet, sent by task; the control block to run next.
  TaskControlBlock *check_priority_add(TaskControlBlock *task, Packet *packet);
};

class Scheduler {
  TaskControlBlock *blocks[NUMBER_OF_IDS] = {};
  TaskControlBlock *list = nullptr;
  TaskControlBlock *current = nullptr;
  int current_id = 0;
  std::vector<std::unique_ptr<TaskControlBlock>> owned_blocks;
  std::vector<std::unique_ptr<Packet>> owned_packets;

  void add_task(int id, int priority, Packet *queue, std::unique_ptr<Task> task);

public:
  long queue_count = 0;
  long hold_count = 0;

  // A packet the scheduler owns, at the head of queue.
  Packet *new_packet(Packet *queue, int id, int kind);
  void add_idle_task(int id, int priority, Packet *queue, int count);
  void add_worker_task(int id, int priority, Packet *queue);
  void add_handler_task(int id, int priority, Packet *queue);
  void add_device_task(int id, int priority, Packet *queue);
  void schedule();

  // What tasks ask of the scheduler: each returns the control block to run next.
  TaskControlBlock *release(int id);
  TaskControlBlock *hold_current();
  TaskControlBlock *suspend_current();
  TaskControlBlock *queue(Packet *packet);
};

} // namespace richards
