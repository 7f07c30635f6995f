// The four kinds of task.
#include "richards.h"

namespace richards {

// Releases the two devices in a pseudo-random order until its count runs out.
TaskControlBlock *IdleTask::run(Packet *) {
  if (--count == 0)
    return scheduler.hold_current();
  if ((v1 & 1) == 0) {
    v1 >>= 1;
    return scheduler.release(ID_DEVICE_A);
  }
  v1 = (v1 >> 1) ^ 0xD008;
  return scheduler.release(ID_DEVICE_B);
}

// Fills a work packet and sends it to one handler, then the other.
TaskControlBlock *WorkerTask::run(Packet *packet) {
  if (!packet)
    return scheduler.suspend_current();
  v1 = v1 == ID_HANDLER_A ? ID_HANDLER_B : ID_HANDLER_A;
  packet->id = v1;
  packet->a1 = 0;
  for (int i = 0; i < DATA_SIZE; ++i) {
    if (++v2 > 26)
      v2 = 1;
    packet->a2[i] = v2;
  }
  return scheduler.queue(packet);
}

// Sends each datum of its work packets to a device, in a device packet.
TaskControlBlock *HandlerTask::run(Packet *packet) {
  if (packet) {
    if (packet->kind == KIND_WORK)
      work = packet->add_to(work);
    else
      devices = packet->add_to(devices);
  }
  if (work) {
    int count = work->a1;
    if (count < DATA_SIZE) {
      if (devices) {
        Packet *v = devices;
        devices = devices->link;
        v->a1 = work->a2[count];
        work->a1 = count + 1;
        return scheduler.queue(v);
      }
    } else {
      Packet *v = work;
      work = work->link;
      return scheduler.queue(v);
    }
  }
  return scheduler.suspend_current();
}

// Holds a packet until it next runs, then sends it back.
TaskControlBlock *DeviceTask::run(Packet *packet) {
  if (!packet) {
    if (!pending)
      return scheduler.suspend_current();
    Packet *v = pending;
    pending = nullptr;
    return scheduler.queue(v);
  }
  pending = packet;
  return scheduler.hold_current();
}

} // namespace richards
