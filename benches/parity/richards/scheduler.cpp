// The scheduler, its task control blocks and packet queues.
#include "richards.h"

#include <utility>

namespace richards {

Packet *Packet::add_to(Packet *queue) {
  link = nullptr;
  if (!queue)
    return this;
  Packet *next = queue;
  while (next->link)
    next = next->link;
  next->link = this;
  return queue;
}

Task::~Task() {}

TaskControlBlock::TaskControlBlock(TaskControlBlock *l, int i, int p, Packet *q, std::unique_ptr<Task> t)
    : state(q ? SUSPENDED_RUNNABLE : SUSPENDED), link(l), id(i), priority(p), queue(q), task(std::move(t)) {}

TaskControlBlock *TaskControlBlock::run() {
  Packet *packet = nullptr;
  if (state == SUSPENDED_RUNNABLE) {
    packet = queue;
    queue = packet->link;
    state = queue ? RUNNABLE : RUNNING;
  }
  return task->run(packet);
}

TaskControlBlock *TaskControlBlock::check_priority_add(TaskControlBlock *task, Packet *packet) {
  if (!queue) {
    queue = packet;
    mark_as_runnable();
    if (priority > task->priority)
      return this;
  } else {
    queue = packet->add_to(queue);
  }
  return task;
}

Packet *Scheduler::new_packet(Packet *queue, int id, int kind) {
  owned_packets.push_back(std::make_unique<Packet>(queue, id, kind));
  return owned_packets.back().get();
}

void Scheduler::add_task(int id, int priority, Packet *queue, std::unique_ptr<Task> task) {
  owned_blocks.push_back(std::make_unique<TaskControlBlock>(list, id, priority, queue, std::move(task)));
  current = owned_blocks.back().get();
  list = current;
  blocks[id] = current;
}

void Scheduler::add_idle_task(int id, int priority, Packet *queue, int count) {
  add_task(id, priority, queue, std::make_unique<IdleTask>(*this, 1, count));
  current->set_running();
}

void Scheduler::add_worker_task(int id, int priority, Packet *queue) {
  add_task(id, priority, queue, std::make_unique<WorkerTask>(*this, ID_HANDLER_A, 0));
}

void Scheduler::add_handler_task(int id, int priority, Packet *queue) {
  add_task(id, priority, queue, std::make_unique<HandlerTask>(*this));
}

void Scheduler::add_device_task(int id, int priority, Packet *queue) {
  add_task(id, priority, queue, std::make_unique<DeviceTask>(*this));
}

void Scheduler::schedule() {
  current = list;
  while (current) {
    if (current->is_held_or_suspended()) {
      current = current->link;
    } else {
      current_id = current->id;
      current = current->run();
    }
  }
}

TaskControlBlock *Scheduler::release(int id) {
  TaskControlBlock *tcb = blocks[id];
  if (!tcb)
    return tcb;
  tcb->mark_as_not_held();
  if (tcb->priority > current->priority)
    return tcb;
  return current;
}

TaskControlBlock *Scheduler::hold_current() {
  ++hold_count;
  current->mark_as_held();
  return current->link;
}

TaskControlBlock *Scheduler::suspend_current() {
  current->mark_as_suspended();
  return current;
}

TaskControlBlock *Scheduler::queue(Packet *packet) {
  TaskControlBlock *t = blocks[packet->id];
  if (!t)
    return t;
  ++queue_count;
  packet->link = nullptr;
  packet->id = current_id;
  return t->check_priority_add(current, packet);
}

} // namespace richards
