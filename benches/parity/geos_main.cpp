// A driver for GEOS (the geos-src crate's sources): polygons, lines and
// points from a fixed pseudo-random sequence, taken through WKT, overlay,
// buffer, simplification, triangulation, polygonization, prepared
// predicates and an STR tree queried through a visitor of its own. Every
// result is printed as rounded WKT or a number, so the -O0 build's output
// is the reference. GEOS's geometry classes, its filters and its index
// visitors are virtual throughout.
#include <geos/algorithm/MinimumDiameter.h>
#include <geos/geom/Coordinate.h>
#include <geos/geom/Envelope.h>
#include <geos/geom/Geometry.h>
#include <geos/geom/GeometryCollection.h>
#include <geos/geom/GeometryComponentFilter.h>
#include <geos/geom/GeometryFactory.h>
#include <geos/geom/IntersectionMatrix.h>
#include <geos/geom/LineString.h>
#include <geos/geom/MultiLineString.h>
#include <geos/geom/Point.h>
#include <geos/geom/Polygon.h>
#include <geos/geom/prep/PreparedGeometry.h>
#include <geos/geom/prep/PreparedGeometryFactory.h>
#include <geos/index/ItemVisitor.h>
#include <geos/index/strtree/STRtree.h>
#include <geos/io/WKTReader.h>
#include <geos/io/WKTWriter.h>
#include <geos/operation/linemerge/LineMerger.h>
#include <geos/operation/polygonize/Polygonizer.h>
#include <geos/operation/union/UnaryUnionOp.h>
#include <geos/simplify/DouglasPeuckerSimplifier.h>
#include <geos/simplify/TopologyPreservingSimplifier.h>
#include <geos/triangulate/DelaunayTriangulationBuilder.h>
#include <geos/triangulate/VoronoiDiagramBuilder.h>
#include <geos/util/GEOSException.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using geos::geom::Geometry;

namespace {

struct Random {
  unsigned long long state;
  double next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(state >> 11) / double(1ULL << 53);
  }
};

// A star-shaped polygon around (cx, cy): always simple, so always valid.
std::string star(Random &r, double cx, double cy, double radius, int points) {
  std::ostringstream s;
  s.precision(6);
  s << std::fixed << "POLYGON((";
  double first_x = 0, first_y = 0;
  for (int i = 0; i < points; ++i) {
    double a = 2 * M_PI * i / points;
    double d = radius * (0.45 + 0.55 * r.next());
    double x = cx + d * std::cos(a), y = cy + d * std::sin(a);
    if (i == 0) {
      first_x = x;
      first_y = y;
    }
    s << x << ' ' << y << ", ";
  }
  s << first_x << ' ' << first_y << "))";
  return s.str();
}

std::string line(Random &r, int points) {
  std::ostringstream s;
  s.precision(6);
  s << std::fixed << "LINESTRING(";
  double x = 100 * r.next(), y = 100 * r.next();
  for (int i = 0; i < points; ++i) {
    s << (i ? ", " : "") << x << ' ' << y;
    x += 20 * r.next() - 10;
    y += 20 * r.next() - 10;
  }
  s << ")";
  return s.str();
}

// Counts the components a geometry is made of, by kind: a filter of its own
// that GEOS calls through its virtual filter_ro.
struct Kinds : geos::geom::GeometryComponentFilter {
  int polygons = 0, lines = 0, points = 0, other = 0;
  void filter_ro(const Geometry *g) override {
    switch (g->getGeometryTypeId()) {
    case geos::geom::GEOS_POLYGON: ++polygons; break;
    case geos::geom::GEOS_LINESTRING:
    case geos::geom::GEOS_LINEARRING: ++lines; break;
    case geos::geom::GEOS_POINT: ++points; break;
    default: ++other;
    }
  }
};

// Sums the areas of the items an STR tree finds: a visitor of its own.
struct AreaSum : geos::index::ItemVisitor {
  double area = 0;
  int items = 0;
  void visitItem(void *item) override {
    area += static_cast<const Geometry *>(item)->getArea();
    ++items;
  }
};

class Driver {
public:
  Driver() : factory_(geos::geom::GeometryFactory::create()), reader_(*factory_) {
    writer_.setRoundingPrecision(4);
    writer_.setTrim(true);
  }

  void run(int round) {
    Random r{0x9e3779b97f4a7c15ULL + unsigned(round)};
    std::vector<std::unique_ptr<Geometry>> polys, lines;
    for (int i = 0; i < 24; ++i)
      polys.push_back(reader_.read(star(r, 100 * r.next(), 100 * r.next(), 8 + 20 * r.next(), 12 + i % 9)));
    for (int i = 0; i < 16; ++i)
      lines.push_back(reader_.read(line(r, 6 + i % 5)));
    std::printf("round %d\n", round);

    for (size_t i = 0; i + 1 < polys.size(); i += 2) {
      const Geometry &a = *polys[i], &b = *polys[i + 1];
      auto inter = a.intersection(&b);
      auto uni = a.Union(&b);
      auto diff = a.difference(&b);
      auto sym = a.symDifference(&b);
      std::printf(" pair %zu: areas %.4f %.4f %.4f %.4f relate %s distance %.4f\n", i, inter->getArea(),
                  uni->getArea(), diff->getArea(), sym->getArea(), a.relate(&b)->toString().c_str(),
                  a.distance(&b));
      print("  union", *uni);
    }

    std::vector<const Geometry *> poly_ptrs;
    for (auto &p : polys)
      poly_ptrs.push_back(p.get());
    auto all = geos::operation::geounion::UnaryUnionOp::Union(poly_ptrs);
    Kinds kinds;
    all->apply_ro(&kinds);
    std::printf(" union of all: area %.4f, %zu points; %d polygons %d lines %d points %d other\n", all->getArea(),
                all->getNumPoints(), kinds.polygons, kinds.lines, kinds.points, kinds.other);
    auto hull = all->convexHull();
    print(" hull", *hull);
    print(" minimum rectangle", *geos::algorithm::MinimumDiameter::getMinimumRectangle(hull.get()));
    auto centroid = all->getCentroid();
    std::printf(" centroid %.4f %.4f valid %d\n", centroid->getX(), centroid->getY(), int(all->isValid()));

    for (size_t i = 0; i < polys.size(); i += 5) {
      auto grown = polys[i]->buffer(2.5, 8);
      auto shrunk = polys[i]->buffer(-1.5);
      auto dp = geos::simplify::DouglasPeuckerSimplifier::simplify(grown.get(), 1.0);
      auto tp = geos::simplify::TopologyPreservingSimplifier::simplify(grown.get(), 1.0);
      std::printf(" buffer %zu: %.4f %.4f, simplified to %zu and %zu points\n", i, grown->getArea(),
                  shrunk->getArea(), dp->getNumPoints(), tp->getNumPoints());
      print("  simplified", *tp);
    }

    // Lines: buffered, merged, noded and polygonized.
    std::vector<const Geometry *> line_ptrs;
    for (auto &l : lines)
      line_ptrs.push_back(l.get());
    double length = 0, buffered = 0;
    for (auto *l : line_ptrs) {
      length += l->getLength();
      buffered += l->buffer(1.0)->getArea();
    }
    std::printf(" lines: length %.4f, buffered area %.4f\n", length, buffered);
    auto noded = geos::operation::geounion::UnaryUnionOp::Union(line_ptrs);
    geos::operation::linemerge::LineMerger merger;
    merger.add(noded.get());
    auto merged = merger.getMergedLineStrings();
    geos::operation::polygonize::Polygonizer polygonizer;
    polygonizer.add(noded.get());
    auto faces = polygonizer.getPolygons();
    double face_area = 0;
    for (auto &f : faces)
      face_area += f->getArea();
    std::printf(" noded into %zu points, merged into %zu lines, %zu faces of area %.4f\n", noded->getNumPoints(),
                merged.size(), faces.size(), face_area);

    // Triangulation and Voronoi diagram of the polygons' vertices.
    auto sites = all->getBoundary();
    geos::triangulate::DelaunayTriangulationBuilder delaunay;
    delaunay.setSites(*sites);
    delaunay.setTolerance(0.01);
    auto triangles = delaunay.getTriangles(*factory_);
    geos::triangulate::VoronoiDiagramBuilder voronoi;
    voronoi.setSites(*sites);
    auto cells = voronoi.getDiagram(*factory_);
    std::printf(" delaunay: %zu triangles of area %.4f; voronoi: %zu cells\n", triangles->getNumGeometries(),
                triangles->getArea(), cells->getNumGeometries());

    // Prepared predicates and an STR tree over the polygons.
    geos::index::strtree::STRtree tree;
    for (auto &p : polys)
      tree.insert(p->getEnvelopeInternal(), p.get());
    for (size_t i = 0; i < lines.size(); i += 3) {
      auto corridor = lines[i]->buffer(4.0);
      auto prepared = geos::geom::prep::PreparedGeometryFactory::prepare(corridor.get());
      int intersects = 0, contains = 0, covers = 0;
      for (auto &p : polys) {
        intersects += prepared->intersects(p.get());
        contains += prepared->contains(p.get());
        covers += prepared->covers(p.get());
      }
      AreaSum sum;
      tree.query(lines[i]->getEnvelopeInternal(), sum);
      std::printf(" line %zu: intersects %d contains %d covers %d; tree finds %d of area %.4f\n", i, intersects,
                  contains, covers, sum.items, sum.area);
    }
  }

private:
  void print(const char *label, const Geometry &g) {
    std::string text = writer_.write(&g);
    if (text.size() > 160)
      text = text.substr(0, 160) + "...";
    std::printf("%s %s\n", label, text.c_str());
  }

  geos::geom::GeometryFactory::Ptr factory_;
  geos::io::WKTReader reader_;
  geos::io::WKTWriter writer_;
};

} // namespace

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 40;
  Driver driver;
  try {
    for (int round = 0; round < rounds; ++round)
      driver.run(round);
  } catch (const geos::util::GEOSException &e) {
    std::printf("GEOS exception: %s\n", e.what());
    return 1;
  }
  return 0;
}
