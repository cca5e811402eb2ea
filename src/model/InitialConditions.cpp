#include "model/InitialConditions.hpp"

#include <muParser.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/Error.hpp"

namespace optistep {

struct InitialVelocity::Expressions {
  double x = 0.0, y = 0.0, z = 0.0;
  mu::Parser parser[3];
};

InitialVelocity::InitialVelocity(const BodyConfig& body, const Vec3& center_of_mass,
                                 const std::string& where)
    : uniform_(body.initial_velocity), where_(where) {
  const InitialConditionsConfig& ic = body.initial_conditions;
  if (ic.has_angular_velocity) {
    omega_ = ic.angular_velocity * ic.axis;
    center_ = ic.has_center ? ic.center : center_of_mass;
  }
  if (!ic.velocity_expression.empty()) {
    expressions_ = std::make_unique<Expressions>();
    for (int d = 0; d < 3; ++d) {
      mu::Parser& p = expressions_->parser[d];
      p.DefineVar("x", &expressions_->x);
      p.DefineVar("y", &expressions_->y);
      p.DefineVar("z", &expressions_->z);
      p.SetExpr(ic.velocity_expression[d]);
    }
  }
}

InitialVelocity::~InitialVelocity() = default;

Vec3 InitialVelocity::operator()(const Vec3& x) const {
  Vec3 v = uniform_;
  if (omega_.squaredNorm() > 0.0) v += omega_.cross(x - center_);
  if (expressions_) {
    expressions_->x = x.x();
    expressions_->y = x.y();
    expressions_->z = x.z();
    for (int d = 0; d < 3; ++d) {
      const double value = expressions_->parser[d].Eval();
      if (!std::isfinite(value)) {
        std::ostringstream what;
        what.precision(6);
        what << where_ << (where_.empty() ? "" : ".") << "initial_conditions.velocity_expression[" << d
             << "] is " << (std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf") << " at (" << x.x() << ", " << x.y() << ", " << x.z()
             << "); expected a finite velocity at every node and particle";
        throw InputError(what.str());
      }
      v[d] += value;
    }
  }
  return v;
}

Mat3 InitialVelocity::Gradient(const Vec3& x, double h) const {
  Mat3 grad;
  grad << 0.0, -omega_.z(), omega_.y(), omega_.z(), 0.0, -omega_.x(), -omega_.y(), omega_.x(), 0.0;
  if (!expressions_) return grad;
  for (int k = 0; k < 3; ++k) {
    const Vec3 step = h * Vec3::Unit(k);
    grad.col(k) += ((*this)(x + step) - (*this)(x - step) - omega_.cross(2.0 * step)) / (2.0 * h);
  }
  return grad;
}

Vec3 PrestrainedPosition(const InitialConditionsConfig& ic, const Vec3& center_of_mass, const Vec3& X) {
  if (!ic.has_prestrain) return X;
  const Vec3 c = ic.has_prestrain_center ? ic.prestrain_center : center_of_mass;
  return c + ic.prestrain * (X - c);
}

std::vector<Vec3> ReadVelocityTable(const std::string& path, long long n_nodes) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the velocity table");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Vec3> v(static_cast<std::size_t>(n_nodes), Vec3::Constant(nan));
  std::string line;
  for (long long number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
    line = line.substr(0, line.find('#'));
    std::istringstream row(line);
    long long node = 0;
    if (!(row >> node)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      throw InputError(where + "expected 'node vx vy vz'");
    }
    Vec3 value;
    std::string rest;
    if (!(row >> value[0] >> value[1] >> value[2]) || (row >> rest) || !value.allFinite())
      throw InputError(where + "expected 'node vx vy vz' with 3 finite velocities");
    if (node < 0 || node >= n_nodes)
      throw InputError(where + "node " + std::to_string(node) + " is not in the body's mesh (0 to " +
                       std::to_string(n_nodes - 1) + ")");
    if (!std::isnan(v[node][0])) throw InputError(where + "node " + std::to_string(node) + " listed twice");
    v[node] = value;
  }
  return v;
}

}  // namespace optistep
