// The box2d program of benches/thinlto_parity.py: Box2D 2.3 (the C++ sources
// vendored in the wrapped2d crate, fetched through cargo) simulating 400
// bodies (circles and boxes, some jointed) for 600 steps. Box2D is built on
// virtual shapes, contacts and joints.
#include <Box2D/Box2D.h>
#include <cstdio>

int main(int argc, char **) {
  b2World world(b2Vec2(0.0f, -10.0f));
  b2BodyDef groundDef;
  b2Body *ground = world.CreateBody(&groundDef);
  b2EdgeShape edge;
  edge.Set(b2Vec2(-40.0f, 0.0f), b2Vec2(40.0f, 0.0f));
  ground->CreateFixture(&edge, 0.0f);
  b2Body *prev = ground;
  for (int i = 0; i < 400; ++i) {
    b2BodyDef def;
    def.type = b2_dynamicBody;
    def.position.Set(-20.0f + (i % 20) * 2.0f, 2.0f + (i / 20) * 2.5f);
    b2Body *body = world.CreateBody(&def);
    if (i % 3 == 0) {
      b2CircleShape c;
      c.m_radius = 0.5f;
      body->CreateFixture(&c, 1.0f);
    } else {
      b2PolygonShape box;
      box.SetAsBox(0.5f, 0.4f + 0.1f * (i % 4));
      body->CreateFixture(&box, 1.0f);
    }
    if (i % 20 != 0 && i % 7 == 0) {
      b2RevoluteJointDef jd;
      jd.Initialize(prev, body, body->GetPosition());
      world.CreateJoint(&jd);
    }
    prev = body;
  }
  double sum = 0;
  for (int step = 0; step < 600 * argc; ++step) {
    world.Step(1.0f / 60.0f, 8, 3);
    if (step % 100 == 0) {
      sum = 0;
      for (b2Body *b = world.GetBodyList(); b; b = b->GetNext())
        sum += b->GetPosition().x + 3 * b->GetPosition().y;
      std::printf("step %d: %.3f (contacts %d)\n", step, sum, world.GetContactCount());
    }
  }
  return 0;
}
