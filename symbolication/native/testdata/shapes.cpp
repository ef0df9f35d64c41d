// C++ for demangling: namespaces, a class hierarchy, a template, an
// overloaded operator and a lambda, with -O2 inlining the small ones.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <vector>

namespace geo {

struct Point {
	double x, y;
	Point operator+(const Point &o) const { return {x + o.x, y + o.y}; }
};

class Shape {
public:
	virtual ~Shape() = default;
	virtual double area() const = 0;
};

class Circle : public Shape {
public:
	explicit Circle(double r) : r_(r) {}
	double area() const override { return 3.14159 * r_ * r_; }

private:
	double r_;
};

class Rect : public Shape {
public:
	Rect(Point a, Point b) : a_(a), b_(b) {}
	double area() const override { return std::abs((b_.x - a_.x) * (b_.y - a_.y)); }

private:
	Point a_, b_;
};

template <typename T>
__attribute__((noinline)) T total(const std::vector<T> &values) {
	return std::accumulate(values.begin(), values.end(), T{});
}

} // namespace geo

namespace {

__attribute__((noinline)) double sum_areas(const std::vector<std::unique_ptr<geo::Shape>> &shapes) {
	std::vector<double> areas;
	for (const auto &s : shapes)
		areas.push_back(s->area());
	return geo::total(areas);
}

} // namespace

int main(int argc, char **) {
	std::vector<std::unique_ptr<geo::Shape>> shapes;
	geo::Point origin{0, 0};
	for (int i = 0; i < 100 * argc; i++) {
		geo::Point corner = origin + geo::Point{double(i), double(i + 1)};
		if (i % 2)
			shapes.push_back(std::make_unique<geo::Circle>(i));
		else
			shapes.push_back(std::make_unique<geo::Rect>(origin, corner));
	}
	auto scaled = [&](double f) { return sum_areas(shapes) * f; };
	std::printf("%f %d\n", scaled(0.5), geo::total(std::vector<int>{1, 2, 3}));
	return 0;
}
