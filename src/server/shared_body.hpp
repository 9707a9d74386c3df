// A Beast body over an immutable shared string: a page built once is sent to every client
// asking for it by reference (one buffer gathered into the write), never copied per response.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace sluice::server {

/// A response body that is a shared immutable string. Assigning a `std::string` wraps it (one
/// move, no copy); assigning a shared pointer shares it. Write-only (Beast `Body`, writer half).
///
/// @par Thread safety
/// A value is immutable once the response is being written; the shared string is never changed.
struct SharedBody {
    /// The body's value: a shared immutable string (empty when none was set).
    class value_type {
    public:
        value_type() = default;

        /// Wraps `s` (moved, not copied).
        value_type& operator=(std::string s) {
            text_ = std::make_shared<const std::string>(std::move(s));
            sliced_ = false;
            return *this;
        }

        /// Shares `s`.
        value_type& operator=(std::shared_ptr<const std::string> s) noexcept {
            text_ = std::move(s);
            sliced_ = false;
            return *this;
        }

        /// Shares `s`, sending only [first, first + n) of it (a Range answer). @pre in bounds.
        void share_slice(
            std::shared_ptr<const std::string> s, std::size_t first, std::size_t n) noexcept {
            text_ = std::move(s);
            first_ = first;
            n_ = n;
            sliced_ = true;
        }

        /// The text (empty when none was set).
        [[nodiscard]] std::string_view view() const noexcept {
            if (!text_) {
                return {};
            }
            const std::string_view all(*text_);
            return sliced_ ? all.substr(first_, n_) : all;
        }

    private:
        std::shared_ptr<const std::string> text_;
        std::size_t first_{};
        std::size_t n_{};
        bool sliced_{false};
    };

    /// The body's size, for Content-Length.
    static std::uint64_t size(const value_type& v) noexcept { return v.view().size(); }

    /// Hands Beast the shared text as one buffer.
    class writer {
    public:
        using const_buffers_type = boost::asio::const_buffer;

        template <bool IsRequest, class Fields>
        writer(const boost::beast::http::header<IsRequest, Fields>& /*h*/, const value_type& b)
            : text_(b.view()) {}

        void init(boost::system::error_code& ec) { ec = {}; }

        boost::optional<std::pair<const_buffers_type, bool>> get(boost::system::error_code& ec) {
            ec = {};
            if (done_) {
                return boost::none;
            }
            done_ = true;
            return {{boost::asio::const_buffer(text_.data(), text_.size()), false}};
        }

    private:
        std::string_view text_;
        bool done_{false};
    };
};

} // namespace sluice::server
